#include "checker/grid_stride.h"

#include <algorithm>

namespace argus::checker {

std::optional<int64_t> firstIndexNoBlockVisits(const std::vector<int64_t>& starts, const std::vector<int64_t>& steps,
                                               int64_t limit) {
  if (starts.size() != steps.size() || starts.empty() || limit <= 0) return std::nullopt;
  for (int64_t step : steps)
    if (step <= 0) return std::nullopt;
  std::vector<bool> visited(static_cast<size_t>(limit), false);
  for (size_t b = 0; b < starts.size(); ++b) {
    int64_t first = starts[b];
    if (first < 0) first += (-first + steps[b] - 1) / steps[b] * steps[b];
    for (int64_t t = first; t < limit; t += steps[b]) visited[static_cast<size_t>(t)] = true;
  }
  for (int64_t t = 0; t < limit; ++t)
    if (!visited[static_cast<size_t>(t)]) return t;
  return std::nullopt;
}

}  // namespace argus::checker

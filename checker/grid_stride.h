// Grid-stride loops (a persistent kernel's `for t in range(start, end, step)`,
// start and step from program_id and num_programs): which loop indices the
// blocks of a launch visit together. Internal to the checker's coverage of
// outputs (AG2040, invariant_separation.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace argus::checker {

// The smallest index t >= 0 that no block visits, block b visiting
// starts[b], starts[b] + steps[b], ...; nothing when every index below
// `limit` is visited (or a step is not positive). With one step for all
// blocks the visited indices repeat with that period past the largest start,
// so a limit of the largest start plus the step decides every index.
std::optional<int64_t> firstIndexNoBlockVisits(const std::vector<int64_t>& starts, const std::vector<int64_t>& steps,
                                               int64_t limit);

}  // namespace argus::checker

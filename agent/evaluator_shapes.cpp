// The shapes a candidate is validated at, derived from the candidate itself
// (docs/agent/evaluation.md, "Validation shapes"): the task's own shapes, a
// shape where every size that a grid axis or a loop tiles spans at least two
// tiles of the candidate's own tile sizes and every such loop runs at least
// STAGES + 1 times, a ragged variant of it, one shape per size stretched as
// far as the interpreter budget allows, and the measured shape when the
// budget affords it. Quantities are observed by evaluation (the grid
// expressions and loopTripCounts), not by matching source patterns, so any
// kernel gets them.
#include <algorithm>
#include <cmath>
#include <set>

#include "agent/cost_model.h"
#include "agent/evaluator_internal.h"
#include "ir/ops.h"

namespace argus::agent::detail {
namespace {

// What the candidate's launch and loops look like at `sizes`: the three grid
// extents, then every loop's trip count (-1 where unknown).
std::vector<int64_t> quantities(const ir::Function& fn, const Sizes& sizes) {
  std::vector<int64_t> values;
  std::vector<int64_t> ordered;
  for (const std::string& name : fn.sizeNames) ordered.push_back(sizes.at(name));
  for (const ir::LaunchExpr& axis : fn.grid) {
    int64_t extent = -1;
    if (!axis.evaluate(ordered, extent)) extent = -1;
    values.push_back(extent);
  }
  for (const std::optional<int64_t>& trips : loopTripCounts(fn, sizes)) values.push_back(trips.value_or(-1));
  return values;
}

Sizes with(Sizes sizes, const std::string& name, int64_t value) {
  sizes[name] = value;
  return sizes;
}

// The smallest v in [1, limit] for which `holds` is true, assuming it is
// monotone (false then true); `limit` when it never holds.
template <typename Predicate>
int64_t smallestHolding(int64_t limit, Predicate holds) {
  int64_t hi = 1;
  while (hi < limit && !holds(hi)) hi = std::min(limit, hi * 2);
  if (!holds(hi)) return limit;
  int64_t lo = hi / 2;  // holds(lo) is false or lo == 0
  while (hi - lo > 1) {
    int64_t mid = lo + (hi - lo) / 2;
    (holds(mid) ? hi : lo) = mid;
  }
  return hi;
}

bool requirementsHold(const ir::Function& fn, const Sizes& sizes, std::string& failed) {
  std::vector<int64_t> ordered;
  for (const std::string& name : fn.sizeNames) ordered.push_back(sizes.at(name));
  const ir::Requirement* r = fn.failedRequirement(ordered);
  if (r) failed = "'" + r->text + "'";
  return r == nullptr;
}

}  // namespace

int pipelineDepth(const ir::Function& fn, int modelledStages) {
  int stages = std::max(1, modelledStages);
  std::vector<const ir::Block*> blocks{&fn.body};
  while (!blocks.empty()) {
    const ir::Block* block = blocks.back();
    blocks.pop_back();
    for (const auto& op : block->ops) {
      if (auto loop = ir::as<ir::ForOp>(*op)) stages = std::max<int>(stages, static_cast<int>(loop->stages()));
      for (const ir::Block& region : op->regions) blocks.push_back(&region);
    }
  }
  for (const auto& [name, value] : fn.constants) {
    std::string upper;
    for (char c : name) upper += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (upper.find("STAGE") != std::string::npos && value > 0 && value < 64) stages = std::max<int>(stages, static_cast<int>(value));
  }
  return stages;
}

std::map<std::string, SizeCoverage> coverageOf(const ir::Function& candidate, const Sizes& measure, int tripTarget) {
  std::map<std::string, SizeCoverage> coverage;
  Sizes current;
  for (const std::string& name : candidate.sizeNames) current[name] = 1;
  for (const std::string& name : candidate.sizeNames) {
    const int64_t limit = std::max<int64_t>(1, measure.at(name));
    std::vector<int64_t> atOne = quantities(candidate, with(current, name, 1));
    std::vector<int64_t> atLimit = quantities(candidate, with(current, name, limit));
    // A quantity depends on this size when it differs between 1 and the measured value.
    std::vector<size_t> dependent;
    std::vector<int64_t> target(atOne.size(), 0);
    for (size_t q = 0; q < atOne.size(); ++q) {
      if (atOne[q] == atLimit[q] || atOne[q] < 0 || atLimit[q] < 0) continue;
      dependent.push_back(q);
      const int64_t wanted = (q < 3 ? 2 : tripTarget) * std::max<int64_t>(1, atOne[q]);
      target[q] = std::min(wanted, atLimit[q]);  // a count that saturates earlier is taken where it saturates
    }
    SizeCoverage c;
    if (dependent.empty()) {
      c.least = c.full = limit;  // nothing tiles along it: the whole measured extent
      coverage[name] = c;
      current[name] = limit;
      continue;
    }
    c.tiled = true;
    auto reached = [&](int64_t v) {
      std::vector<int64_t> at = quantities(candidate, with(current, name, v));
      for (size_t q : dependent)
        if (at[q] < target[q]) return false;
      return true;
    };
    c.least = smallestHolding(limit, reached);
    const std::vector<int64_t> atLeast = quantities(candidate, with(current, name, c.least));
    auto changed = [&](int64_t v) {
      std::vector<int64_t> at = quantities(candidate, with(current, name, v));
      for (size_t q : dependent)
        if (at[q] != atLeast[q]) return true;
      return false;
    };
    // The largest value with the same tile counts: whole tiles, no ragged edge.
    c.full = c.least;
    if (c.least < limit) {
      int64_t firstChange = c.least + smallestHolding(limit - c.least, [&](int64_t d) { return changed(c.least + d); });
      c.full = changed(firstChange) ? firstChange - 1 : limit;
    }
    coverage[name] = c;
    current[name] = c.full;
  }
  return coverage;
}

ShapePlan planValidationShapes(const ir::Function& reference, const ir::Function& candidate, const Task& task,
                               int tripTarget, double workBudget, std::mt19937_64& rng) {
  ShapePlan plan;
  plan.tripTarget = tripTarget;
  plan.coverage = coverageOf(candidate, task.measure, tripTarget);
  auto work = [&](const Sizes& sizes) {
    CostEstimate r = estimateCost(reference, sizes), c = estimateCost(candidate, sizes);
    return r.flops + r.globalBytes + c.flops + c.globalBytes;
  };
  std::set<Sizes> seen;
  auto add = [&](const std::string& role, Sizes sizes) {
    // A derived shape keeps the task's promises: a size rounded to its multiple (down
    // when rounding up would pass the measured value, which keeps them itself).
    for (const auto& [name, m] : task.multipleOf) {
      int64_t& v = sizes[name];
      int64_t up = (v + m - 1) / m * m;
      v = up <= task.measure.at(name) ? up : std::max<int64_t>(m, v / m * m);
    }
    if (!seen.insert(sizes).second) return;
    std::string failed;
    // The task's own shapes always run: a candidate that cannot run at them fails.
    if (role != "task" && (!requirementsHold(reference, sizes, failed) || !requirementsHold(candidate, sizes, failed))) {
      plan.skipped.push_back(role + " " + sizesText(sizes) + ": requirement " + failed + " does not hold there");
      return;
    }
    plan.shapes.push_back({role, sizes});
  };
  for (const Sizes& sizes : task.validate) add("task", sizes);

  // Whole tiles: every tiled size at its full tile count. A size nothing tiles
  // along is halved until the budget allows it (never below the task's own).
  Sizes tiles;
  for (const auto& [name, c] : plan.coverage) tiles[name] = c.full;
  auto taskLargest = [&](const std::string& name) {
    int64_t largest = 1;
    for (const Sizes& v : task.validate)
      if (auto it = v.find(name); it != v.end()) largest = std::max(largest, it->second);
    return largest;
  };
  for (bool shrunk = true; shrunk && work(tiles) > workBudget;) {
    shrunk = false;
    for (const auto& [name, c] : plan.coverage) {
      if (!c.tiled && tiles[name] / 2 >= taskLargest(name)) {
        tiles[name] /= 2;
        shrunk = true;
        break;
      }
    }
  }
  add("tiles", tiles);

  // Ragged: each size drawn between its least and its whole-tile value.
  Sizes ragged;
  for (const auto& [name, c] : plan.coverage) {
    int64_t lo = c.tiled ? c.least : std::max<int64_t>(1, tiles[name] / 2);
    ragged[name] = std::uniform_int_distribution<int64_t>(lo, std::max(lo, tiles[name]))(rng);
  }
  add("ragged", ragged);

  // Stretched: one size at a time as far toward its measured value as the
  // budget allows (the others at their least), so a candidate that changes
  // behaviour above some size is run above it where the interpreter can afford.
  for (const auto& [name, c] : plan.coverage) {
    const int64_t limit = task.measure.at(name);
    if (tiles[name] >= limit) continue;
    Sizes base;
    for (const auto& [other, oc] : plan.coverage) base[other] = other == name ? tiles[name] : std::min(oc.least, tiles[other]);
    const int64_t span = limit - tiles[name];
    const int64_t over = smallestHolding(span, [&](int64_t d) { return work(with(base, name, tiles[name] + d)) > workBudget; });
    int64_t largest = tiles[name] + (work(with(base, name, tiles[name] + over)) > workBudget ? over - 1 : over);
    if (largest <= tiles[name]) continue;
    // Near the largest affordable value (a size threshold below it is crossed), ragged at random.
    int64_t value = std::uniform_int_distribution<int64_t>(std::max(tiles[name] + 1, largest - largest / 8), largest)(rng);
    add("stretched " + name, with(base, name, value));
  }

  if (work(task.measure) <= workBudget) add("measure", task.measure);
  else plan.measureUnaffordable = true;
  return plan;
}

}  // namespace argus::agent::detail

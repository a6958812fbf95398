#include "ir/register_estimate.h"

#include <algorithm>
#include <map>

#include "ir/ops.h"

namespace argus::ir {

namespace {

struct Interval {
  int begin = -1, end = -1;
  // Extra live ranges inside the else branches of Ifs entered after the definition: the
  // two branches never both run, so a value the else branch uses is not live across the
  // then branch on its account.
  std::vector<std::pair<int, int>> elseRanges;
};

class LivenessWalk {
 public:
  explicit LivenessWalk(const Function& fn) : fn_(fn) {}

  void run() { walk(fn_.body, {}, {}); }

  const Function& fn_;
  std::vector<const Op*> opAt;       // program position -> op
  std::map<ValueId, Interval> live;  // tile value -> positions where it is live

 private:
  struct LoopSpan {
    int begin, end;  // positions of the loop op and of its last nested op
  };
  struct ElseSpan {
    int ifAt, begin;  // positions of the If op and of its else branch's first op
  };

  bool isTile(ValueId id) const { return id < fn_.values.size() && fn_.values[id].type.isTile(); }

  void define(ValueId id, int position) {
    if (isTile(id)) live[id] = Interval{position, position, {}};
  }

  void use(ValueId id, int position, const std::vector<LoopSpan>& loops, const std::vector<ElseSpan>& elses) {
    auto it = live.find(id);
    if (it == live.end()) return;
    Interval& interval = it->second;
    int end = position;
    // Used in a loop that does not contain its definition: live until the loop ends.
    for (const LoopSpan& loop : loops)
      if (interval.begin < loop.begin) {
        end = std::max(end, loop.end);
        break;
      }
    // Used in the else branch of an If entered after the definition (and not in a loop
    // around both): live into the If, then again only within that else branch.
    for (const ElseSpan& branch : elses)
      if (interval.begin < branch.ifAt && end == position) {
        interval.end = std::max(interval.end, branch.ifAt);
        interval.elseRanges.emplace_back(branch.begin, position);
        return;
      }
    interval.end = std::max(interval.end, end);
  }

  int countOps(const Block& block) const {
    int n = 0;
    for (const auto& op : block.ops) {
      ++n;
      for (const Block& region : op->regions) n += countOps(region);
    }
    return n;
  }

  void walk(const Block& block, std::vector<LoopSpan> loops, std::vector<ElseSpan> elses) {
    for (const auto& op : block.ops) {
      int position = static_cast<int>(opAt.size());
      opAt.push_back(op.get());
      for (ValueId operand : op->operands) use(operand, position, loops, elses);
      int last = position;
      for (const Block& region : op->regions) last += countOps(region);
      if (op->kind == OpKind::For) {
        std::vector<LoopSpan> inner = loops;
        inner.push_back({position, last});
        for (const Block& region : op->regions) {
          // A carried tile enters at the loop; what the body yields for it lives until the Yield.
          for (ValueId arg : region.args)
            if (isTile(arg)) live[arg] = Interval{position, position, {}};
          walk(region, inner, {});
        }
      } else if (op->kind == OpKind::If && op->regions.size() == 2) {
        walk(op->regions[0], loops, elses);
        std::vector<ElseSpan> inner = elses;
        inner.insert(inner.begin(), ElseSpan{position, static_cast<int>(opAt.size())});
        walk(op->regions[1], loops, inner);
      } else {
        for (const Block& region : op->regions) walk(region, loops, elses);
      }
      for (ValueId result : op->results) define(result, op->regions.empty() ? position : last);
    }
  }
};

bool isElementwise(OpKind kind) {
  return kind == OpKind::Binary || kind == OpKind::Compare || kind == OpKind::Unary || kind == OpKind::Fma ||
         kind == OpKind::Select || kind == OpKind::Cast;
}

// Each value's uses, and its one user where there is exactly one.
struct Uses {
  std::map<ValueId, int> count;
  std::map<ValueId, const Op*> user;
  void walk(const Block& block) {
    for (const auto& op : block.ops) {
      for (ValueId v : op->operands) {
        ++count[v];
        user[v] = op.get();
      }
      for (const Block& region : op->regions) walk(region);
    }
  }
};

// A temporary of an element-wise expression (iota, or an element-wise result feeding one
// element-wise op or reduction): code generation computes it element by element into its
// user, so its registers never exist all at once.
bool isFusedTemporary(const Function& fn, ValueId id, const Uses& uses) {
  const Op* def = fn.values[id].def;
  if (!def || !(def->kind == OpKind::Iota || isElementwise(def->kind))) return false;
  auto n = uses.count.find(id);
  if (n == uses.count.end()) return true;  // dead: code generation drops it
  if (n->second != 1) return false;
  const Op* user = uses.user.at(id);
  return isElementwise(user->kind) || user->kind == OpKind::Reduce || user->kind == OpKind::ReduceAll;
}

int64_t registersOf(const Function& fn, ValueId id) {
  // A broadcast reuses the registers of its operand, and a splat holds one value.
  if (const Op* def = fn.values[id].def) {
    if (def->kind == OpKind::Broadcast && !def->operands.empty()) {
      const ValueId x = BroadcastOp(*def).x();
      if (fn.values[x].type.isTile()) return registersOf(fn, x);
    }
    if (def->kind == OpKind::Splat) return dtypeBits(fn.values[id].type.dtype) > 32 ? 2 : 1;
  }
  const Type& t = fn.values[id].type;
  const int64_t values = Distribution::of(t.layout, fn.numWarps).valuesPerThread;
  // An mma layout's values come in column pairs (e = 0, 1): 16-bit ones travel packed, two
  // to a register, as the tensor cores read and write them.
  if (t.layout.isMma() && dtypeBits(t.dtype) == 16) return (values + 1) / 2;
  return values * (dtypeBits(t.dtype) > 32 ? 2 : 1);
}

}  // namespace

TileRegisterPeak estimateTileRegisters(const Function& fn) {
  TileRegisterPeak result;
  LivenessWalk walk(fn);
  walk.run();
  int positions = static_cast<int>(walk.opAt.size());
  if (positions == 0) return result;
  // A tile occupies its registers from its definition up to (not including) its
  // last use: an op's operands that die there hand their registers to its results.
  std::vector<int64_t> delta(static_cast<size_t>(positions) + 2, 0);
  std::map<ValueId, int64_t> cost;
  Uses uses;
  uses.walk(fn.body);
  for (const auto& [id, interval] : walk.live) {
    int64_t regs = isFusedTemporary(fn, id, uses) ? 0 : registersOf(fn, id);
    cost[id] = regs;
    auto occupy = [&](int from, int to) {
      size_t begin = static_cast<size_t>(std::min(from, positions));
      size_t end = static_cast<size_t>(std::min(std::max(to, from + 1), positions + 1));
      delta[begin] += regs;
      delta[end] -= regs;
    };
    occupy(interval.begin, interval.end);
    for (const auto& [from, to] : interval.elseRanges)
      if (from > interval.end && to > from) occupy(from, to);  // a range ends where its last use hands it on
  }
  int64_t running = 0, peak = 0;
  int peakAt = 0;
  for (int p = 0; p < positions; ++p) {
    running += delta[static_cast<size_t>(p)];
    if (running > peak) {
      peak = running;
      peakAt = p;
    }
  }
  result.registers = peak;
  result.at = walk.opAt[static_cast<size_t>(peakAt)];
  for (const auto& [id, live] : walk.live) {
    const auto& interval = live;  // a named reference: clang < 16 cannot capture a structured binding
    if (cost[id] > 0 && ((interval.begin <= peakAt && (peakAt < interval.end || peakAt == interval.begin)) ||
                         std::any_of(interval.elseRanges.begin(), interval.elseRanges.end(),
                                     [&](const auto& r) { return r.first > interval.end && r.first <= peakAt &&
                                                                 peakAt < r.second; })))
      result.liveAtPeak.emplace_back(cost[id], id);
  }
  std::sort(result.liveAtPeak.begin(), result.liveAtPeak.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  return result;
}

}  // namespace argus::ir

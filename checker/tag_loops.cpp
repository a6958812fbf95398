// Loops in the tag flow, by induction over the iteration index j. The tags at
// the head of iteration j are guessed, the body is walked from the guess, and
// the guess is proven: for j > 0 it must cover what iteration j - 1 yields.
//   a loop that writes a stage ring: the ring guess (tag_rings.cpp) first;
//   guess 1: the tags on entry, unchanged;
//   guess 2: the entry's at j = 0, else what the body yields from guess 1 at j - 1;
//   then the tags that still fail are given up (unknown for j > 0).
// Every claim is a Z3 query; an undecided one counts as failed (sound).
#include "checker/formula_walk.h"
#include "checker/tag_state.h"
#include "ir/ops.h"

namespace argus::checker {

void mergeOrigins(TagMap& out, const TagMap& a, const TagMap& b) {
  bool aTagged = !a.tags.empty(), bTagged = !b.tags.empty();
  out.originTensor = !bTagged ? a.originTensor : !aTagged ? b.originTensor : a.originTensor == b.originTensor ? a.originTensor : -1;
  out.originAxes = !bTagged ? a.originAxes : !aTagged ? b.originAxes : a.originAxes == b.originAxes ? a.originAxes : std::vector<OriginAxis>{};
}

TagMap combineMaps(const std::string& owner, const TagMap& a, const TagMap& b, const Combine& f) {
  TagMap out;
  for (const auto& [key, term] : a.tags) {
    auto it = b.tags.find(key);
    out.tags.insert_or_assign(key, f(owner + "/" + key, &term, it == b.tags.end() ? nullptr : &it->second));
  }
  for (const auto& [key, term] : b.tags)
    if (!a.tags.count(key)) out.tags.insert_or_assign(key, f(owner + "/" + key, nullptr, &term));
  mergeOrigins(out, a, b);
  out.trace = a.trace;
  addLabels(out.trace, b.trace, 4);
  return out;
}

TagFlow::State TagFlow::combineStates(const State& entry, const State& other, const Combine& f) {
  State out;
  for (size_t i = 0; i < entry.carried.size(); ++i)
    out.carried.push_back(combineMaps("c" + std::to_string(i), entry.carried[i],
                                      i < other.carried.size() ? other.carried[i] : TagMap{}, f));
  for (const auto& [buffer, slots] : other.buffers) {
    auto it = entry.buffers.find(buffer);
    out.buffers[buffer] = combineMaps("b" + std::to_string(buffer), it == entry.buffers.end() ? TagMap{} : it->second, slots, f);
  }
  return out;
}

std::vector<z3::expr> TagFlow::boundsOf(const ir::Type& type, bool slots) {
  std::vector<z3::expr> out;
  for (size_t d = 0; d < type.shape.size(); ++d)
    out.push_back(z3::ult(slots ? slotVar(d) : coordVar(d), bv(std::max<int64_t>(type.shape[d], 1))));
  return out;
}

TagFlow::State TagFlow::walkBody(const ir::Op& op, const State& head, const LoopFrame& loop, bool record) {
  const ir::Block& body = op.regions[0];
  for (size_t i = 0; i + 1 < body.args.size() && i < head.carried.size(); ++i) tiles_[body.args[i + 1]] = head.carried[i];
  buffers_ = head.buffers;
  bool saved = recording_;
  recording_ = record;
  loopStack_.push_back(loop);
  walk(body);
  loopStack_.pop_back();
  recording_ = saved;
  State out;
  if (!body.ops.empty() && body.ops.back()->kind == ir::OpKind::Yield)
    for (ir::ValueId v : body.ops.back()->operands) {
      const TagMap* t = tilesTags(v);
      out.carried.push_back(t ? *t : TagMap{});
    }
  out.carried.resize(head.carried.size());
  out.buffers = buffers_;
  return out;
}

// ite(j == 0, entry, yield at j - 1), component by component; the components
// in `giveUp` are the entry's at j = 0 and unknown after.
TagFlow::State TagFlow::loopHead(const State& entry, const State& yield, const LoopFrame& loop,
                                 const std::set<std::string>& giveUp, const ir::Op& op) {
  z3::expr first = loop.j == 0, no = ctx_.bool_val(false);
  std::vector<z3::expr> from{loop.j}, to{loop.j - 1};
  Label lost{op.range, "the tag changes from one iteration of the loop over '" + loop.name +
                           "' to the next in a way the checker cannot summarize"};
  Combine f = [&](const std::string& key, const TagTerm* e, const TagTerm* y) {
    TagTerm entryTerm = e ? *e : TagTerm{bv(0), no, no, {}};
    TagTerm out = entryTerm;
    if (giveUp.count(key)) {
      out.known = first && entryTerm.known;
      out.present = !first || entryTerm.present;
      addLabels(out.why, {lost}, 3);
      return out;
    }
    TagTerm previous = y ? *y : TagTerm{bv(0), no, no, {}};
    out.value = z3::ite(first, entryTerm.value, substitute(previous.value, from, to));
    out.known = z3::ite(first, entryTerm.known, substitute(previous.known, from, to));
    out.present = z3::ite(first, entryTerm.present, substitute(previous.present, from, to));
    addLabels(out.why, previous.why, 3);
    return out;
  };
  return combineStates(entry, yield, f);
}

// After the loop: the entry's tags when it runs zero times, else the last iteration's.
TagFlow::State TagFlow::loopExit(const State& entry, const State& last, const LoopFrame& loop, const ir::Op&) {
  z3::expr never = loop.tripCount == 0, no = ctx_.bool_val(false);
  std::vector<z3::expr> from{loop.j}, to{loop.tripCount - 1};
  Combine f = [&](const std::string&, const TagTerm* e, const TagTerm* y) {
    TagTerm entryTerm = e ? *e : TagTerm{bv(0), no, no, {}};
    TagTerm lastTerm = y ? *y : TagTerm{bv(0), no, no, {}};
    TagTerm out{z3::ite(never, entryTerm.value, substitute(lastTerm.value, from, to)),
                z3::ite(never, entryTerm.known, substitute(lastTerm.known, from, to)),
                z3::ite(never, entryTerm.present, substitute(lastTerm.present, from, to)), entryTerm.why};
    addLabels(out.why, lastTerm.why, 3);
    return out;
  };
  return combineStates(entry, last, f);
}

// The components whose claim head(j) == yield(j - 1), for every j > 0, is not
// proven. A head that says "carried, unknown" covers anything.
std::set<std::string> TagFlow::failingClaims(const State& head, const State& yield, const LoopFrame& loop, const ir::Op& op,
                                             bool which) {
  std::set<std::string> failing;
  std::vector<z3::expr> from{loop.j}, to{loop.j - 1};
  z3::expr context = assumptions() && loop.valid && z3::ugt(loop.j, bv(0));
  z3::expr no = ctx_.bool_val(false);
  // One query for all claims first; only when it fails, one per claim to find the culprits.
  std::vector<std::pair<std::string, z3::expr>> claims;
  auto claim = [&](const std::string& key, const TagTerm* h, const TagTerm* y, const std::vector<z3::expr>& bounds) {
    TagTerm headTerm = h ? *h : TagTerm{bv(0), no, no, {}};
    TagTerm previous = y ? *y : TagTerm{bv(0), no, no, {}};
    z3::expr yValue = substitute(previous.value, from, to), yKnown = substitute(previous.known, from, to),
             yPresent = substitute(previous.present, from, to);
    z3::expr violation = (!headTerm.present && yPresent) || (headTerm.present && headTerm.known && !yPresent) ||
                         (headTerm.present && headTerm.known && yPresent && !(yKnown && yValue == headTerm.value));
    z3::expr formula = violation;
    for (const z3::expr& b : bounds) formula = formula && b;
    claims.emplace_back(key, formula);
  };
  const ir::Block& body = op.regions[0];
  auto visit = [&](const std::string& owner, const TagMap& h, const TagMap& y, const std::vector<z3::expr>& bounds) {
    for (const auto& [key, term] : h.tags) {
      auto it = y.tags.find(key);
      claim(owner + "/" + key, &term, it == y.tags.end() ? nullptr : &it->second, bounds);
    }
    for (const auto& [key, term] : y.tags)
      if (!h.tags.count(key)) claim(owner + "/" + key, nullptr, &term, bounds);
  };
  for (size_t i = 0; i < head.carried.size(); ++i) {
    std::vector<z3::expr> bounds = i + 1 < body.args.size() ? boundsOf(fn_.values[body.args[i + 1]].type, false)
                                                            : std::vector<z3::expr>{};
    visit("c" + std::to_string(i), head.carried[i], i < yield.carried.size() ? yield.carried[i] : TagMap{}, bounds);
  }
  for (const auto& [buffer, slots] : yield.buffers) {
    auto it = head.buffers.find(buffer);
    visit("b" + std::to_string(buffer), it == head.buffers.end() ? TagMap{} : it->second, slots,
          boundsOf(fn_.values[buffer].type, true));
  }
  if (claims.empty()) return failing;
  z3::expr any = ctx_.bool_val(false);
  for (const auto& [key, formula] : claims) any = any || formula;
  if (check(context && any)) return failing;
  if (!which) return {"*"};  // some claim fails; which ones only matters when giving up
  for (const auto& [key, formula] : claims)
    if (!check(context && formula)) failing.insert(key);
  return failing;
}

namespace {

// Whether some tag the body yields depends on the iteration index where the
// head's does not: a buffer filled from the tile of iteration j, a product
// carried from one iteration to the next. Then the guess "unchanged" almost
// surely fails, and the solver's search for a model that shows it cost the
// GEMMs' persistent loops 100 to 350 thousand resource units (gemm_nn).
// Skipping a guess is sound: the guesses after it are proven as before.
bool yieldDependsOnIteration(const TagMap& head, const TagMap& yield, const z3::expr& j) {
  for (const auto& [key, term] : yield.tags) {
    auto it = head.tags.find(key);
    bool headStill = it == head.tags.end() ||
                     !(mentions(it->second.value, j) || mentions(it->second.known, j) || mentions(it->second.present, j));
    if (headStill && (mentions(term.value, j) || mentions(term.known, j) || mentions(term.present, j))) return true;
  }
  return false;
}

}  // namespace

bool TagFlow::dependsOnIteration(const State& head, const State& yield, const z3::expr& j) {
  for (size_t i = 0; i < yield.carried.size(); ++i)
    if (yieldDependsOnIteration(i < head.carried.size() ? head.carried[i] : TagMap{}, yield.carried[i], j)) return true;
  for (const auto& [buffer, slots] : yield.buffers) {
    auto it = head.buffers.find(buffer);
    if (yieldDependsOnIteration(it == head.buffers.end() ? TagMap{} : it->second, slots, j)) return true;
  }
  return false;
}

void TagFlow::walkFor(const ir::Op& op) {
  if (op.operands.size() < 3 || op.regions.size() != 1 || op.regions[0].args.empty()) return;
  const ir::Block& body = op.regions[0];
  z3::expr j = loopJ_.at(&op);
  const ir::ForOp forOp(op);
  z3::expr lb = scalar(forOp.lowerBound()), ub = scalar(forOp.upperBound()), stride = scalar(forOp.step());
  z3::expr lb64 = z3::sext(lb, 32), ub64 = z3::sext(ub, 32), step64 = z3::sext(stride, 32);
  z3::expr iv64 = lb64 + step64 * z3::zext(j, 32);
  z3::expr valid = z3::ult(j, ctx_.bv_val(static_cast<uint64_t>(0x7FFFFFFFu), 32)) && stride > 0 && iv64 < ub64;
  z3::expr trips = z3::ite(ub64 > lb64 && step64 > 0,
                           z3::to_expr(ctx_, Z3_mk_bvsdiv(ctx_, ub64 - lb64 + step64 - 1, step64)).extract(31, 0), bv(0));
  LoopFrame loop{&op, j, iv64.extract(31, 0), valid, trips, fn_.values[body.args[0]].name};
  if (loop.name.empty()) loop.name = "the loop at " + position(op.range);

  State entry;
  for (size_t i = 3; i < op.operands.size(); ++i) {
    const TagMap* t = tilesTags(op.operands[i]);
    entry.carried.push_back(t ? *t : TagMap{});
  }
  entry.buffers = buffers_;

  // Guess 1: unchanged. Guess 2: the ring guess (ringGuess). Then head(j) =
  // entry at j = 0, else the previous guess's yield at j - 1, a few times; then
  // give up what still fails, then everything.
  State head = entry;
  // A ring loop's first walk only tells which components the body touches.
  bool ring = ringDepth(op) > 0, savedDots = exactDots_;
  exactDots_ = savedDots && !ring;
  State yield = walkBody(op, head, loop, false);
  exactDots_ = savedDots;
  // A loop that fills a ring of stages changes its tags every iteration: no
  // need to ask whether they stay unchanged.
  std::set<std::string> failing = !ring && !dependsOnIteration(head, yield, loop.j)
                                      ? failingClaims(head, yield, loop, op, false)
                                      : std::set<std::string>{"*"};
  if (ring) {
    if (std::optional<State> guess = ringGuess(entry, yield, loop, op)) {
      head = std::move(*guess);
      failing.clear();
    } else {
      yield = walkBody(op, head, loop, false);  // with the dots' tags, for the rounds below
    }
  }
  std::set<std::string> giveUp;
  for (int round = 0; round < 5 && !failing.empty(); ++round) {
    if (round >= 3) giveUp.insert(failing.begin(), failing.end());
    if (round == 4) {
      for (const State* st : {&head, &yield}) {
        for (size_t i = 0; i < st->carried.size(); ++i)
          for (const auto& [key, term] : st->carried[i].tags) giveUp.insert("c" + std::to_string(i) + "/" + key);
        for (const auto& [buffer, slots] : st->buffers)
          for (const auto& [key, term] : slots.tags) giveUp.insert("b" + std::to_string(buffer) + "/" + key);
      }
    }
    head = loopHead(entry, yield, loop, giveUp, op);
    yield = walkBody(op, head, loop, false);
    failing = round == 4 ? std::set<std::string>{} : failingClaims(head, yield, loop, op, round >= 2);
  }
  State last = walkBody(op, head, loop, recording_);
  State exit = loopExit(entry, last, loop, op);
  for (size_t i = 0; i < op.results.size() && i < exit.carried.size(); ++i) tiles_[op.results[i]] = exit.carried[i];
  buffers_ = exit.buffers;
}

}  // namespace argus::checker

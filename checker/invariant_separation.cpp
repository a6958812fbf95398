// Separation of global stores (AG2036): within one launch every block runs
// concurrently, and nothing orders the stores of two blocks (or two threads)
// to global memory, so no two distinct instances of stores may write the same
// element of a tensor. An instance is (block, thread, value, loop iterations);
// only primary owners store (ir/types.h, Distribution), and elements outside
// the tensor are skipped (masked), so neither counts. One thread rewriting an
// element, in another iteration or by another store, is ordered by program
// order and is not a conflict.
//
// For each pair of store ops on the same tensor (an op with itself included)
// one Z3 query: two copies of the block-uniform scalars (checker/
// invariant_scalar.h; the second copy's program ids and iteration indices are
// renamed, the runtime sizes are shared: one launch), a symbolic thread and
// value per side through the layout's mixed radix, and the question whether
// both sides reach one in-bounds element from different blocks or different
// threads. A side whose offsets depend on a value the encoding does not
// interpret, an `if` condition it cannot encode, or a grid it cannot encode
// keeps the check silent (it does not model such stores). An answer "unknown"
// (the query's resource limit, or the kernel's budget, spent) is the warning
// AG2004 "cannot prove", never silence.
#include <z3++.h>

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <vector>

#include "checker/grid_stride.h"
#include "checker/invariant_check.h"
#include "checker/invariant_scalar.h"
#include "checker/layout_encode.h"
#include "checker/scalar_semantics.h"
#include "checker/solver_budget.h"
#include "ir/ops.h"

namespace argus::checker {

using ir::OpKind;

namespace {

// Runtime sizes of the "small launches" asked first, and the resources the
// bit-vector question for every launch may spend after that. What is left
// for it once the integers proved the grouped orders (the persistent loops
// of tiles) ended undecided at 500 000 as at 150 000, 0.2 to 0.6 s each;
// every diagnostic of the corpus, goldens and mutants is the same at 150 000
// but the limit in two AG2004 messages.
constexpr int64_t kSmallSize = 256;
constexpr uint64_t kLargeLaunchRlimit = 150'000;
// The same question over the integers (separateOverIntegers), each half.
constexpr uint64_t kIntegerRlimit = 400'000;
// Past this, a conflict is one of i32 wrap-around in the size arithmetic.
constexpr int64_t kLargestPlausibleSize = int64_t{1} << 30;

struct GlobalStore {
  const ir::Op* store = nullptr;  // a Store (SeparationCheck::addStore)
  const ir::Op* view = nullptr;
  const ir::Param* tensor = nullptr;
  ScalarScope scope;
};

// One instance of a store: its scalars, thread, value and the element it writes.
struct Instance {
  std::unique_ptr<ScalarEncoder> encoder;
  z3::expr_vector from, to;  // renaming of this side's program ids and iterations
  std::vector<z3::expr> constraints;
  std::vector<z3::expr> layoutConstraints;  // the thread and value's, also in constraints
  std::vector<z3::expr> coordinate;         // in the stored tile, by the layout (32-bit, its last axes)
  std::vector<z3::expr> element;  // 64-bit coordinates in the tensor
  std::vector<z3::expr> offset;   // the view's offsets (32-bit)
  std::vector<z3::expr> programIds;
  std::vector<std::pair<std::string, z3::expr>> iterations;  // loop variable -> value
  std::optional<z3::expr> thread, value;
  explicit Instance(z3::context& ctx) : from(ctx), to(ctx) {}
  z3::expr renamed(z3::expr e) { return from.empty() ? e : e.substitute(from, to); }
};


std::string elementText(const std::string& tensor, const std::vector<int64_t>& element) {
  std::string s = tensor + "[";
  for (size_t d = 0; d < element.size(); ++d) s += (d ? ", " : "") + std::to_string(element[d]);
  return s + "]";
}

class SeparationCheck {
 public:
  SeparationCheck(const ir::Function& fn, DiagnosticSink& diags, const Options& options)
      : fn_(fn), diags_(diags), options_(options) {}

  void run() {
    budget_.setTraceLabel("separation");
    collect(fn_.body);
    checkOutputsWritten();
    for (size_t i = 0; i < stores_.size(); ++i)
      for (size_t j = i; j < stores_.size(); ++j) {
        if (stores_[i].tensor != stores_[j].tensor) continue;
        if (budget_.spent()) {
          cannotProve(stores_[i], stores_[j], budget_.spentReason());
          continue;
        }
        try {
          checkPair(stores_[i], stores_[j]);
        } catch (const z3::exception& e) {
          cannotProve(stores_[i], stores_[j], std::string("the solver failed: ") + e.msg());
        }
      }
  }

 private:
  void collect(const ir::Block& body) {
    ScalarScope scope;
    forEachOpInScope(body, scope, [&](const ir::Op& op, const ScalarScope& around) {
      // Global writes as the op table declares them (ir/ops.def): a store's tile is encoded; a
      // write the check has no encoding for is "cannot prove", never skipped.
      for (const ir::MemoryEffect& effect : ir::memoryEffects(fn_, op)) {
        if (effect.space != ir::MemSpace::Global || effect.decl->access != ir::MemoryAccess::Write) continue;
        if (effect.decl->elements == ir::EffectElements::StoredValueLayout)
          addStore(op, around);
        else
          diags_.report(DiagId::CheckerCannotProve, op.range,
                        {"no two blocks or threads write the same element of global memory with this " +
                             std::string(ir::opKindName(op.kind)),
                         "the checker does not know which elements each thread writes for it; the CPU interpreter "
                         "checks the launches it runs"});
      }
    });
  }

  // `store`: an op whose global write is StoredValueLayout, which only Store declares (ir/ops.def).
  void addStore(const ir::Op& store, const ScalarScope& scope) {
    const ir::StoreOp storeOp(store);
    if (store.operands.size() < 2 || !fn_.typeOf(storeOp.value()).isTile()) return;
    const ir::Op* view = fn_.values[storeOp.view()].def;
    if (!view || view->kind != OpKind::View || view->operands.empty()) return;
    const ir::ValueId base = ir::ViewOp(*view).base();
    if (fn_.typeOf(base).kind != ir::TypeKind::Tensor) return;
    const ir::Param* tensor = nullptr;
    for (const ir::Param& p : fn_.params)
      if (p.value == base && p.kind == ir::ParamKind::Tensor) tensor = &p;
    bool encodable = tensor && view->operands.size() == tensor->dims.size() + 1;
    for (const auto& [cond, taken] : scope.conditions)
      encodable = encodable && conditionEncodable(fn_, cond);  // where it runs is unknown: never a false alarm
    if (encodable) stores_.push_back({&store, view, tensor, scope});
    else if (tensor) unmodelled_.insert(tensor);
  }

  // Built-in (AG2040): every element of an output is written. A tensor that
  // the kernel only stores into is its output, and a launch that leaves one of
  // its elements unwritten returns garbage there (a persistent tile loop one
  // tile short, a grid one block short, a row block stored at a column
  // coordinate). A test at launches fixed to numbers (the smallest the
  // requirements allow, and the smallest with every size at least 2, then 257): for
  // the first and the last element, is there a block, iteration, thread and
  // value of some store that writes it? Unsat for every store is a finding.
  // A store the encoding does not model (its offsets, an `if` it cannot
  // encode) keeps its tensor untested.
  void checkOutputsWritten() {
    std::set<const ir::Param*> tensors, slices;
    for (const GlobalStore& s : stores_) {
      if (writesAFixedSlice(s)) slices.insert(s.tensor);
      if (!loaded(s.tensor->value) && !unmodelled_.count(s.tensor)) tensors.insert(s.tensor);
    }
    for (const ir::Param* sliced : slices) tensors.erase(sliced);
    for (const ir::Param* tensor : tensors) {
      if (budget_.spent()) return;
      try {
        checkWritten(*tensor);
      } catch (const z3::exception&) {
        // A test, not a proof: undecided says nothing.
      }
    }
  }

  // A store at a literal coordinate past the first along some axis, or at a
  // literal coordinate of an axis of constant extent its tile does not cover
  // (`y[b, 1, i, 0]` of a (B, 2, M, 64) tensor): the kernel writes one slice of
  // that axis on purpose, and the rest of the tensor is not its to write.
  bool writesAFixedSlice(const GlobalStore& s) const {
    const ir::Op& view = *s.view;
    const std::vector<int64_t>& tile = fn_.typeOf(view.results[0]).shape;
    size_t rank = s.tensor->dims.size();
    for (size_t d = 0; d < rank && d + 1 < view.operands.size(); ++d) {
      const std::optional<int64_t> offset = ir::constantInt(fn_, view.operands[d + 1]);
      if (!offset) continue;
      int64_t length = d + tile.size() >= rank ? tile[d + tile.size() - rank] : 1;
      const ir::DimRef& dim = s.tensor->dims[d];
      if (*offset >= 1 || (dim.constant >= 0 && dim.constant > length)) return true;
    }
    return false;
  }

  // Whether `value` comes from a dot (through elementwise ops, casts and loop-carried values).
  bool storesProduct(ir::ValueId value) const {
    std::vector<ir::ValueId> work{value};
    std::set<ir::ValueId> seen;
    while (!work.empty() && seen.size() < 256) {
      ir::ValueId v = work.back();
      work.pop_back();
      if (v >= fn_.values.size() || !seen.insert(v).second || !fn_.values[v].type.isTile()) continue;
      const ir::Op* def = fn_.values[v].def;
      if (!def) continue;
      switch (def->kind) {
        case OpKind::Dot: return true;
        case OpKind::For:
          if (!def->regions.empty() && !def->regions[0].ops.empty() && def->regions[0].ops.back()->kind == OpKind::Yield)
            for (size_t i = 0; i < def->results.size(); ++i)
              if (def->results[i] == v && i < def->regions[0].ops.back()->operands.size())
                work.push_back(def->regions[0].ops.back()->operands[i]);
          break;
        case OpKind::Binary: case OpKind::Unary: case OpKind::Fma: case OpKind::Select:
        case OpKind::Cast: case OpKind::ConvertLayout:
          work.insert(work.end(), def->operands.begin(), def->operands.end());
          break;
        default: break;
      }
    }
    return false;
  }

  // Whether anything reads the tensor (a load, or a copy from it).
  bool loaded(ir::ValueId tensor) const {
    bool found = false;
    forEachOpWithDepth(fn_.body, 0, [&](const ir::Op& op, int) {
      if (op.kind != OpKind::View || op.operands.empty() || ir::ViewOp(op).base() != tensor) return;
      for (const auto& [user, index] : usesOf(op.results[0]))
        found = found || !(user->kind == OpKind::Store && index == 0);
    });
    return found;
  }

  std::vector<std::pair<const ir::Op*, size_t>> usesOf(ir::ValueId v) const {
    std::vector<std::pair<const ir::Op*, size_t>> out;
    forEachOpWithDepth(fn_.body, 0, [&](const ir::Op& op, int) {
      for (size_t i = 0; i < op.operands.size(); ++i)
        if (op.operands[i] == v) out.emplace_back(&op, i);
    });
    return out;
  }

  void checkWritten(const ir::Param& tensor) {
    if (!ctx_) ctx_ = &SolverBudget::contextFor(options_, ownContext_);
    std::vector<std::unique_ptr<Instance>> sides;
    std::vector<const GlobalStore*> of;
    for (const GlobalStore& s : stores_) {
      if (s.tensor != &tensor) continue;
      auto side = std::make_unique<Instance>(*ctx_);
      if (!encode(s, "_w" + std::to_string(sides.size()), *side)) return;  // not modelled: no claim
      sides.push_back(std::move(side));
      of.push_back(&s);
    }
    if (sides.empty()) return;
    // The launch: every runtime size, under the requirements and a non-empty grid.
    // Sizes of 2 catch a grid axis walking the wrong tensor axis (a swapped
    // program_id) at a launch small enough to replay, which takes two grid axes
    // that grow with the sizes; 257 a loop or grid one tile short.
    int sizedAxes = 0;
    for (const ir::LaunchExpr& axis : fn_.grid) sizedAxes += dependsOnSizes(axis) ? 1 : 0;
    // Past the widest tile as well: a row kernel whose tile is the whole row
    // (BLOCK = 4096) without its `require(N <= BLOCK)` leaves the rest of a
    // longer row unwritten, which no launch of 257 shows. Then each size in
    // turn long (16 of the widest tiles and one more) and the others at their
    // least: a grouped tile order whose group is sized by the wrong axis
    // misses tiles only when one axis has more tiles than a group and the
    // other few.
    const int64_t widest = widestTile();
    std::vector<std::vector<int64_t>> launches{everySize(1)};
    if (sizedAxes >= 2) launches.push_back(everySize(2));
    launches.push_back(everySize(257));
    if (widest + 1 > 257) launches.push_back(everySize(widest + 1));
    if (fn_.sizeNames.size() >= 2 && 16 * widest + 1 > 257)
      for (size_t i = 0; i < fn_.sizeNames.size(); ++i) {
        bool extentOfTensor = false;  // M and N of C, not K
        for (const ir::DimRef& dim : tensor.dims) extentOfTensor = extentOfTensor || dim.sizeIndex == static_cast<int>(i);
        if (!extentOfTensor) continue;
        std::vector<int64_t> oneLong = everySize(1);
        oneLong[i] = 16 * widest + 1;
        launches.push_back(oneLong);
      }
    // A persistent kernel whose loop over tiles leaves indices no block visits shows it only
    // past as many tiles as blocks: the launch whose loop ends just past the first such index.
    for (size_t i = 0; i < of.size(); ++i)
      if (std::optional<std::vector<int64_t>> past = launchPastGridStrideGap(*of[i], *sides[i]))
        launches.push_back(*past);
    for (const std::vector<int64_t>& atLeast : launches) {
      std::optional<Unwritten> found = unwrittenAt(tensor, sides, atLeast);
      // Found at 257: the smallest of a few launches in between that shows it
      // too (sizes of 2 only where they were not asked already, which costs
      // every correct kernel a launch), a witness easier to replay and read.
      if (found && atLeast == everySize(257))
        for (int64_t smaller : {int64_t{2}, int64_t{17}, int64_t{33}, int64_t{65}, int64_t{129}}) {
          if (smaller == 2 && sizedAxes >= 2) continue;
          if (std::optional<Unwritten> there = unwrittenAt(tensor, sides, everySize(smaller))) {
            found = there;
            break;
          }
        }
      if (!found) continue;
      // Then each size on its own, the others kept: a size the miss does not
      // depend on (the experts of a MoE GEMM) drops to 2, so the witness's
      // tensors stay small enough to replay.
      std::vector<int64_t> shorter{2, 17, 33, 65, 2 * widest + 1, 4 * widest + 1, 8 * widest + 1};
      std::sort(shorter.begin(), shorter.end());
      for (size_t i = 0; i < found->sizes.size(); ++i)
        for (int64_t smaller : shorter) {
          if (smaller >= found->sizes[i]) break;
          std::vector<int64_t> bounds = found->sizes;
          bounds[i] = smaller;
          if (std::optional<Unwritten> there = unwrittenAt(tensor, sides, bounds)) {
            found = there;
            break;
          }
        }
      reportUnwritten(tensor, *of[0], found->element, found->sizes, of.size());
      return;
    }
  }

  // The largest extent of any tile the kernel views (a load's, a store's, a copy's).
  int64_t widestTile() const {
    int64_t widest = 0;
    forEachOpWithDepth(fn_.body, 0, [&](const ir::Op& op, int) {
      if (op.kind != OpKind::View || op.results.empty()) return;
      for (int64_t extent : fn_.typeOf(op.results[0]).shape) widest = std::max(widest, extent);
    });
    return widest;
  }

  // The smallest launch whose grid-stride loop around the store `s` (a loop over tiles whose
  // start or step differs between blocks, in a kernel whose one-dimensional grid of at most
  // 4096 blocks does not grow with the sizes) ends just past the first index no block visits
  // (checker/grid_stride.h): the loop's last index, whose tile is usually the tensor's last,
  // is then one nobody computes. Whether it is unwritten is asked as for any launch.
  std::optional<std::vector<int64_t>> launchPastGridStrideGap(const GlobalStore& s, Instance& side) {
    for (const ir::LaunchExpr& axis : fn_.grid)
      if (dependsOnSizes(axis)) return std::nullopt;
    std::vector<int64_t> anySizes(fn_.sizeNames.size(), 1);
    int64_t extents[3] = {0, 0, 0};
    for (int axis = 0; axis < 3; ++axis)
      if (!fn_.grid[axis].evaluate(anySizes, extents[axis])) return std::nullopt;
    if (extents[0] < 2 || extents[0] > 4096 || extents[1] != 1 || extents[2] != 1) return std::nullopt;
    auto signedValue = [](const z3::expr& e) {
      const int64_t v = static_cast<int64_t>(e.get_numeral_uint64());
      return v >= (int64_t{1} << 31) ? v - (int64_t{1} << 32) : v;
    };
    ScalarEncoder& enc = *side.encoder;
    z3::expr pid = ctx_->bv_const("program_id0", 32);  // the name ScalarEncoder gives it
    for (const ir::Op* loop : s.scope.loops) {
      const ir::ForOp forOp(*loop);
      z3::expr start = enc.scalar(forOp.lowerBound()), step = enc.scalar(forOp.step());
      z3::expr end = enc.scalar(forOp.upperBound());
      if (!enc.opaqueNames().empty()) return std::nullopt;
      std::vector<int64_t> starts, steps;
      for (int64_t b = 0; b < extents[0]; ++b) {
        z3::expr_vector from(*ctx_), to(*ctx_);
        from.push_back(pid);
        to.push_back(bv(b));
        z3::expr first = start.substitute(from, to).simplify(), stride = step.substitute(from, to).simplify();
        if (!first.is_numeral() || !stride.is_numeral()) break;
        starts.push_back(signedValue(first));
        steps.push_back(signedValue(stride));
      }
      if (starts.size() != static_cast<size_t>(extents[0])) continue;
      const int64_t maxStart = *std::max_element(starts.begin(), starts.end());
      const int64_t maxStep = *std::max_element(steps.begin(), steps.end());
      if (maxStart == *std::min_element(starts.begin(), starts.end()) &&
          maxStep == *std::min_element(steps.begin(), steps.end()))
        continue;  // every block walks the same indices: not a loop that shares them out
      if (maxStart + maxStep > (int64_t{1} << 22)) continue;
      std::optional<int64_t> gap = firstIndexNoBlockVisits(starts, steps, maxStart + maxStep);
      if (!gap) continue;
      z3::optimize smallest(*ctx_);
      budget_.limit(smallest);
      ScalarScope kernelScope;
      ScalarEncoder requirements(*ctx_, fn_, kernelScope);
      for (const z3::expr& c : requirements.constraints()) smallest.add(c);
      for (size_t i = 0; i < fn_.sizeNames.size(); ++i)
        smallest.add(z3::uge(sizeVar(i), bv(1)) && z3::ule(sizeVar(i), bv(1 << 20)));
      z3::expr_vector from(*ctx_), to(*ctx_);
      from.push_back(pid);
      to.push_back(bv(0));
      smallest.add(end.substitute(from, to) == bv(*gap + 1));
      for (size_t i = 0; i < fn_.sizeNames.size(); ++i) smallest.minimize(sizeVar(i));
      if (budget_.check(smallest) != z3::sat) continue;
      z3::model model = smallest.get_model();
      std::vector<int64_t> sizes;
      for (size_t i = 0; i < fn_.sizeNames.size(); ++i) sizes.push_back(ScalarEncoder::valueOf(model, sizeVar(i)));
      return sizes;
    }
    return std::nullopt;
  }

  struct Unwritten {
    std::vector<int64_t> element, sizes;
  };

  std::vector<int64_t> everySize(int64_t atLeast) const { return std::vector<int64_t>(fn_.sizeNames.size(), atLeast); }

  // The first or the last element of `tensor` that no store writes at the
  // smallest launch with each size at least its `atLeast`; none when both are
  // written, the launch is impossible, or the solver cannot decide.
  std::optional<Unwritten> unwrittenAt(const ir::Param& tensor, const std::vector<std::unique_ptr<Instance>>& sides,
                                       const std::vector<int64_t>& atLeast) {
    z3::solver launch(*ctx_, "QF_BV");
    budget_.limit(launch);
    ScalarScope kernelScope;
    ScalarEncoder requirements(*ctx_, fn_, kernelScope);
    for (const z3::expr& c : requirements.constraints()) launch.add(c);
    for (int axis = 0; axis < 3; ++axis) {  // a grid with blocks, within CUDA's limits
      auto grid = launchInt(fn_.grid[axis]);
      if (!grid) return std::nullopt;
      launch.add(*grid >= ctx_->bv_val(1, 64) && *grid <= ctx_->bv_val(axis == 0 ? (int64_t{1} << 31) - 1 : 65535, 64));
    }
    for (size_t i = 0; i < fn_.sizeNames.size(); ++i)
      launch.add(z3::uge(sizeVar(i), bv(atLeast[i])) && z3::ule(sizeVar(i), bv(1 << 16)));
    std::vector<int64_t> sizes = smallestLaunch(launch, atLeast);
    if (sizes.empty()) return std::nullopt;
    std::vector<int64_t> first;
    for (bool last : {false, true}) {
      std::vector<int64_t> element;
      for (const ir::DimRef& dim : tensor.dims)
        element.push_back(!last ? 0 : (dim.constant >= 0 ? dim.constant : sizes[static_cast<size_t>(dim.sizeIndex)]) - 1);
      if (last && element == first) continue;  // a launch of one tile: asked already
      first = element;
      bool written = false, decided = true;
      for (const auto& side : sides) {
        z3::solver solver(*ctx_, "QF_BV");
        budget_.limit(solver);
        for (const z3::expr& c : side->constraints) solver.add(c);
        for (size_t i = 0; i < fn_.sizeNames.size(); ++i) solver.add(sizeVar(i) == bv(sizes[i]));
        for (size_t d = 0; d < element.size(); ++d) solver.add(side->element[d] == ctx_->bv_val(element[d], 64));
        // Block 0's thread 0 in the first iterations usually writes element 0: with every
        // unknown a number the solver answers at once, where the search takes 0.2-0.4 s
        // through a grouped tile order's divisions.
        // (Copies, not push/pop: see copyOfSolver.)
        z3::solver firstThread = copyOfSolver(solver);
        budget_.limit(firstThread);
        for (size_t i = 0; i < side->from.size(); ++i) firstThread.add(side->to[static_cast<int>(i)] == bv(0));
        firstThread.add(*side->thread == bv(0) && *side->value == bv(0));
        z3::check_result r = budget_.answer(firstThread);
        // Then some block in the first iteration of every loop: a persistent
        // kernel's block p walks tile p first, so any element of the first
        // `grid` tiles is found without the search through iterations.
        if (r != z3::sat && side->to.size() > 3) {
          z3::solver firstIterations = copyOfSolver(solver);
          budget_.limit(firstIterations);
          for (size_t i = 3; i < side->to.size(); ++i) firstIterations.add(side->to[static_cast<int>(i)] == bv(0));
          r = budget_.answer(firstIterations);
        }
        if (r != z3::sat) r = budget_.answer(solver);
        written = written || r == z3::sat;
        decided = decided && r != z3::unknown;
        if (written) break;
      }
      if (written || !decided) continue;
      bool empty = false;
      for (int64_t e : element) empty = empty || e < 0;
      if (empty) continue;
      return Unwritten{element, sizes};
    }
    return std::nullopt;
  }

  static bool dependsOnSizes(const ir::LaunchExpr& e) {
    if (e.kind == ir::LaunchExpr::Kind::Size) return true;
    for (const ir::LaunchExpr& o : e.operands)
      if (dependsOnSizes(o)) return true;
    return false;
  }

  // The smallest sizes (each at least `atLeast`) of a launch `launch` allows;
  // none when there is none. Every size at its bound is the usual answer, and
  // with every size a constant the solver answers at once: the optimizer only
  // when the requirements rule it out.
  std::vector<int64_t> smallestLaunch(z3::solver& launch, const std::vector<int64_t>& atLeast) {
    std::vector<int64_t> sizes;
    z3::solver atBoundLaunch = copyOfSolver(launch);
    budget_.limit(atBoundLaunch);
    for (size_t i = 0; i < fn_.sizeNames.size(); ++i) atBoundLaunch.add(sizeVar(i) == bv(atLeast[i]));
    if (budget_.answer(atBoundLaunch) == z3::sat) return atLeast;
    if (budget_.answer(launch) != z3::sat) return sizes;
    z3::optimize smallest(*ctx_);
    budget_.limit(smallest);
    for (const z3::expr& e : launch.assertions()) smallest.add(e);
    for (size_t i = 0; i < fn_.sizeNames.size(); ++i) smallest.minimize(sizeVar(i));
    if (budget_.check(smallest) != z3::sat) return sizes;
    z3::model model = smallest.get_model();
    for (size_t i = 0; i < fn_.sizeNames.size(); ++i) sizes.push_back(ScalarEncoder::valueOf(model, sizeVar(i)));
    return sizes;
  }

  void reportUnwritten(const ir::Param& tensor, const GlobalStore& store, const std::vector<int64_t>& element,
                       const std::vector<int64_t>& sizes, size_t stores) {
    std::string launch;
    for (size_t i = 0; i < fn_.sizeNames.size(); ++i)
      launch += (launch.empty() ? "" : ", ") + fn_.sizeNames[i] + " = " + std::to_string(sizes[i]);
    std::string text = elementText(tensor.name, element);
    std::string who = stores == 1 ? "this store, the only one of '" + tensor.name + "',"
                                  : "none of the " + std::to_string(stores) + " stores of '" + tensor.name + "'";
    Diagnostic& d = diags_.report(DiagId::OutputElementUnwritten, store.store->range,
                                  {text, tensor.name, launch, who});
    Counterexample cx;
    cx.facts.emplace_back("element", text);
    cx.facts.emplace_back("launch", launch);
    d.counterexample = std::move(cx);
    bool product = false;
    for (const GlobalStore& s : stores_)
      product = product || (s.tensor == &tensor && storesProduct(ir::StoreOp(*s.store).value()));
    if (product)
      d.notes.push_back("'" + tensor.name + "' is only stored into, with values computed by dot(): it is the product's "
                        "output, and every element of it must be written; check the tile loop's bounds and the grid");
    else
      d.notes.push_back("'" + tensor.name + "' is only stored into: it is the kernel's output, and every element of it "
                        "must be written; check the stored tile's coordinates (which axis program_id() walks), the "
                        "loop's bounds and the grid");
  }

  z3::expr bv(int64_t v) { return ctx_->bv_val(v, 32); }
  z3::expr sizeVar(size_t index) {
    std::string name = index < fn_.sizeNames.size() ? fn_.sizeNames[index] : std::to_string(index);
    return ctx_->bv_const(("size_" + name).c_str(), 32);  // the name ScalarEncoder gives it
  }

  // The grid expressions in 64 bits, as the host evaluates them (a product of
  // two block counts can pass 2^31 where the i32 arithmetic would wrap).
  std::optional<z3::expr> launchInt(const ir::LaunchExpr& e) {
    return encodeLaunchInt(*ctx_, e, [&](int64_t index) { return sizeVar(static_cast<size_t>(index)); });
  }

  // Encodes one side; `suffix` renames its program ids and iteration indices. False: not encodable.
  bool encode(const GlobalStore& s, const std::string& suffix, Instance& side) {
    side.encoder = std::make_unique<ScalarEncoder>(*ctx_, fn_, s.scope);
    ScalarEncoder& enc = *side.encoder;
    for (int axis = 0; axis < 3; ++axis) {
      z3::expr pid = ctx_->bv_const(("program_id" + std::to_string(axis)).c_str(), 32);
      z3::expr own = ctx_->bv_const(("program_id" + std::to_string(axis) + suffix).c_str(), 32);
      side.from.push_back(pid);
      side.to.push_back(own);
      side.programIds.push_back(own);
    }
    for (size_t l = 0; l < s.scope.loops.size(); ++l) {
      side.from.push_back(ctx_->bv_const(("j" + std::to_string(l)).c_str(), 32));
      side.to.push_back(ctx_->bv_const(("j" + std::to_string(l) + suffix).c_str(), 32));
    }
    for (size_t d = 1; d < s.view->operands.size(); ++d) side.offset.push_back(enc.scalar(s.view->operands[d]));
    for (const ir::Op* loop : s.scope.loops)
      if (!loop->regions.empty() && !loop->regions[0].args.empty()) {
        ir::ValueId iv = loop->regions[0].args[0];
        const std::string& name = fn_.values[iv].name;
        side.iterations.emplace_back(name.empty() ? "the loop variable" : name, enc.scalar(iv));
      }
    if (!enc.opaqueNames().empty()) return false;
    for (z3::expr& x : side.offset) x = side.renamed(x);
    for (auto& [name, iv] : side.iterations) iv = side.renamed(iv);
    for (const z3::expr& c : enc.constraints()) side.constraints.push_back(side.renamed(c));
    for (int axis = 0; axis < 3; ++axis) {
      auto grid = launchInt(fn_.grid[axis]);
      if (!grid) return false;
      // A launch past CUDA's grid limits fails on the host and never runs.
      const int64_t maxBlocks = axis == 0 ? (int64_t{1} << 31) - 1 : 65535;
      z3::expr pid = side.programIds[static_cast<size_t>(axis)];
      side.constraints.push_back(pid >= 0 && z3::sext(pid, 32) < *grid && *grid <= ctx_->bv_val(maxBlocks, 64));
    }
    // Thread and value through the layout's mixed radix (ir/types.h), as sync_encode.cpp does.
    const ir::Layout& layout = fn_.typeOf(ir::StoreOp(*s.store).value()).layout;
    const ir::Distribution dist = ir::Distribution::of(layout, fn_.numWarps);
    z3::expr t = ctx_->bv_const(("thread" + suffix).c_str(), 32);
    z3::expr v = ctx_->bv_const(("value" + suffix).c_str(), 32);
    side.thread = t;
    side.value = v;
    side.layoutConstraints.push_back(z3::ult(t, bv(fn_.numThreads())) && z3::ult(v, bv(dist.valuesPerThread)));
    EncodedDistribution encoded = encodeDistribution(*ctx_, layout, dist, t, v, /*withPrimaryOwner=*/true);
    const std::vector<z3::expr>& c = encoded.coordinate;
    side.coordinate = c;
    // Only the primary owner stores; leftover bits are replicas.
    for (const z3::expr& condition : encoded.primaryOwner) side.layoutConstraints.push_back(condition);
    side.constraints.insert(side.constraints.end(), side.layoutConstraints.begin(), side.layoutConstraints.end());
    size_t r = s.tensor->dims.size(), k = c.size();
    if (k > r) return false;
    for (size_t d = 0; d < r; ++d) {
      z3::expr x = z3::sext(side.offset[d], 32);
      if (d + k >= r) x = x + z3::zext(c[d + k - r], 32);
      const ir::DimRef& dim = s.tensor->dims[d];
      z3::expr extent = dim.constant >= 0 ? ctx_->bv_val(dim.constant, 64)
                                          : z3::sext(sizeVar(static_cast<size_t>(dim.sizeIndex)), 32);
      if (dim.constant < 0) side.constraints.push_back(sizeVar(static_cast<size_t>(dim.sizeIndex)) >= 0);
      side.constraints.push_back(x >= 0 && x < extent);  // elements outside the tensor are skipped
      side.element.push_back(x);
    }
    return true;
  }

  void checkPair(const GlobalStore& a, const GlobalStore& b) {
    if (!ctx_) ctx_ = &SolverBudget::contextFor(options_, ownContext_);
    Instance first(*ctx_), second(*ctx_);
    if (!encode(a, "_a", first) || !encode(b, "_b", second)) return;
    z3::expr_vector sameElement(*ctx_);
    for (const z3::expr& c : first.constraints) sameElement.push_back(c);
    for (const z3::expr& c : second.constraints) sameElement.push_back(c);
    for (size_t d = 0; d < first.element.size(); ++d) sameElement.push_back(first.element[d] == second.element[d]);
    z3::expr otherBlock = ctx_->bool_val(false);
    for (size_t axis = 0; axis < 3; ++axis) otherBlock = otherBlock || first.programIds[axis] != second.programIds[axis];
    z3::solver solver(*ctx_, "QF_BV");
    for (const z3::expr& c : sameElement) solver.add(c);
    solver.add(otherBlock || *first.thread != *second.thread);
    // Small launches first (every runtime size at most kSmallSize): there the
    // solver settles a grouped tile order's divisions quickly, both ways, and a
    // model is a real counterexample.
    z3::expr small = ctx_->bool_val(true);
    for (size_t i = 0; i < fn_.sizeNames.size(); ++i) small = small && z3::ule(sizeVar(i), bv(kSmallSize));
    z3::solver smallLaunches = copyOfSolver(solver);
    smallLaunches.add(small);
    budget_.limit(smallLaunches);
    z3::check_result result = budget_.check(smallLaunches);
    if (result == z3::unknown) {  // undecided: "cannot prove", never silence and never a guess
      cannotProve(a, b, "the solver gave up (" + budget_.unknownReason(smallLaunches) + ")");
      return;
    }
    if (result == z3::sat) {
      z3::model model = minimize(smallLaunches.assertions(), first, second).value_or(smallLaunches.get_model());
      return report(a, b, first, second, model);
    }
    // Separate in every small launch; now every launch in which no index
    // computation wraps around, over the integers, where the quotients and
    // remainders of a grouped tile order have short proofs (only there: the
    // bit-vectors settle linear offsets at once, and every question asked in
    // the lane's context can change how the later ones go).
    const bool divides = dividesByRuntimeValue(*a.view) || dividesByRuntimeValue(*b.view);
    if (divides && separateOverIntegers(z3::mk_and(sameElement), otherBlock, first, second)) return;
    // Any launch, within a smaller limit:
    // undecided there is "cannot prove" for the larger launches, never silence.
    // Asked of the bit-blaster, the small launches (separate, above) left
    // out: cold, Z3's QF_BV solver left the persistent GEMM of
    // invariant_product_unwritten.ag undecided within the limit, which this
    // decides (it used to be decided after the small tier's check had warmed
    // the solver up under a push).
    z3::solver everyLaunch = bitVectorSolver(*ctx_);
    for (const z3::expr& e : solver.assertions()) everyLaunch.add(e);
    everyLaunch.add(!small);
    budget_.limit(everyLaunch, kLargeLaunchRlimit);
    z3::check_result every = budget_.checkExactly(everyLaunch);
    if (every == z3::unsat) return;
    if (every == z3::unknown) {
      cannotProve(a, b,
                  "it holds in every launch whose runtime sizes are all at most " + std::to_string(kSmallSize) +
                      ", but for larger launches the solver gave up (" + budget_.unknownReason(everyLaunch, kLargeLaunchRlimit) +
                      (divides ? "; the tile indices divide by a value computed from the runtime sizes" : "") +
                      "); the CPU interpreter checks the launches it runs");
      return;
    }
    z3::model model = minimize(solver.assertions(), first, second).value_or(everyLaunch.get_model());
    // A conflict only at sizes past 2^30, where i32 index arithmetic such as
    // cdiv(M, BM) wraps: the kernel is wrong there, but no tensor that large
    // is launched in practice, and a witness of two billion rows helps no one.
    for (size_t i = 0; i < fn_.sizeNames.size(); ++i) {
      z3::expr v = model.eval(sizeVar(i), true);
      if (ScalarEncoder::valueOf(model, v) <= kLargestPlausibleSize) continue;
      cannotProve(a, b,
                  "it holds in every launch whose runtime sizes are all at most " + std::to_string(kSmallSize) +
                      "; the solver found a conflict only at " + fn_.sizeNames[i] + " = " +
                      std::to_string(ScalarEncoder::valueOf(model, v)) +
                      ", where the kernel's i32 index arithmetic wraps around; the CPU interpreter checks the "
                      "launches it runs");
      return;
    }
    report(a, b, first, second, model);
  }

  // Whether no two blocks, and no two threads of one block, store the same
  // element in any launch whose index arithmetic does not wrap around
  // (integer_reading.h), asked as two questions: the blocks' tile orders
  // and the layout of one block's tile are different proofs, and together
  // they sent the solver searching (gemm_tc: 1 M resource units at once).
  // In one block the program ids are the same terms, so the tile's offsets
  // cancel and what is left is the layout's digits.
  bool separateOverIntegers(z3::expr sameElement, const z3::expr& otherBlock, const Instance& first,
                            const Instance& second) {
    z3::expr_vector secondIds(*ctx_), firstIds(*ctx_);
    for (size_t axis = 0; axis < 3; ++axis) {
      secondIds.push_back(second.programIds[axis]);
      firstIds.push_back(first.programIds[axis]);
    }
    z3::expr otherThread = *first.thread != *second.thread;
    if (!unsatOverIntegers(sameElement && otherBlock)) return false;
    // One block. Where the tile's offsets are the same terms on both sides
    // (a store outside loops), the elements are equal exactly when the
    // layout's coordinates are: a question about the layout alone, a few
    // bits wide.
    bool sameOffsets = first.coordinate.size() == second.coordinate.size();
    for (size_t d = 0; sameOffsets && d < first.offset.size(); ++d)
      sameOffsets = z3::eq(z3::expr(second.offset[d]).substitute(secondIds, firstIds), first.offset[d]);
    if (sameOffsets) {
      z3::solver layoutOnly = bitVectorSolver(*ctx_);
      for (const Instance* side : {&first, &second})
        for (const z3::expr& c : side->layoutConstraints) layoutOnly.add(c);
      for (size_t d = 0; d < first.coordinate.size(); ++d) layoutOnly.add(first.coordinate[d] == second.coordinate[d]);
      layoutOnly.add(otherThread);
      budget_.limit(layoutOnly);
      if (budget_.checkExactly(layoutOnly) == z3::unsat) return true;
    }
    return unsatOverIntegers(sameElement.substitute(secondIds, firstIds) && otherThread);
  }

  // In the lane's context: one of its own would cost 50 to 70 ms to make.
  bool unsatOverIntegers(const z3::expr& question) { return budget_.unsatOverIntegers(question, kIntegerRlimit); }

  // Whether the view's offsets use a division or remainder by a non-constant (a grouped
  // or persistent tile order): nonlinear for the solver, which is why such a query may stay undecided.
  bool dividesByRuntimeValue(const ir::Op& view) const {
    std::vector<ir::ValueId> work(view.operands.begin() + 1, view.operands.end());
    std::set<ir::ValueId> seen;
    while (!work.empty()) {
      ir::ValueId id = work.back();
      work.pop_back();
      if (id >= fn_.values.size() || !seen.insert(id).second) continue;
      const ir::Op* def = fn_.values[id].def;
      if (!def) continue;
      if (def->kind == OpKind::Binary && def->operands.size() == 2 &&
          (ir::BinaryOp(*def).binaryKind() == ir::BinaryKind::Div || ir::BinaryOp(*def).binaryKind() == ir::BinaryKind::Rem)) {
        const ir::ValueId rhs = ir::BinaryOp(*def).rhs();
        const ir::Op* divisor = rhs < fn_.values.size() ? fn_.values[rhs].def : nullptr;
        if (!divisor || divisor->kind != OpKind::Const) return true;
      }
      work.insert(work.end(), def->operands.begin(), def->operands.end());
    }
    return false;
  }

  void cannotProve(const GlobalStore& a, const GlobalStore& b, const std::string& why) {
    const std::string& tensor = a.tensor->name;
    std::string what = "no two blocks or threads store the same element of '" + tensor + "'" +
                       (a.store == b.store ? std::string(" here") : std::string(" (this store and the labelled one)"));
    Diagnostic& d = diags_.report(DiagId::CheckerCannotProve, b.store->range, {what, why});
    if (a.store != b.store) d.labels.push_back(Label{a.store->range, "the other store of '" + tensor + "'"});
  }

  // Smallest launch, then the first blocks, iterations and threads: a readable counterexample.
  std::optional<z3::model> minimize(const z3::expr_vector& assertions, const Instance& first, const Instance& second) {
    z3::optimize opt(*ctx_);
    budget_.limit(opt);
    for (const z3::expr& e : assertions) opt.add(e);
    for (size_t i = 0; i < fn_.sizeNames.size(); ++i) opt.minimize(sizeVar(i));
    for (const Instance* side : {&first, &second}) {
      for (size_t axis = 3; axis-- > 0;) opt.minimize(side->programIds[axis]);
      for (size_t l = 0; l < side->to.size(); ++l)
        if (l >= 3) opt.minimize(side->to[static_cast<unsigned>(l)]);
      opt.minimize(*side->thread);
      opt.minimize(*side->value);
    }
    if (budget_.check(opt) != z3::sat) return std::nullopt;
    return opt.get_model();
  }

  std::string instanceText(const Instance& side, const z3::model& model) {
    std::string s;
    for (size_t axis = 0; axis < 3; ++axis)
      if (!(fn_.grid[axis].kind == ir::LaunchExpr::Kind::Const && fn_.grid[axis].value == 1))
        s += (s.empty() ? "" : ", ") + std::string("program_id(") + std::to_string(axis) +
             ") = " + std::to_string(ScalarEncoder::valueOf(model, side.programIds[axis]));
    int64_t t = ScalarEncoder::valueOf(model, *side.thread);
    s += (s.empty() ? "" : ", ") + std::string("thread ") + std::to_string(t) + " (warp " + std::to_string(t / 32) +
         ", lane " + std::to_string(t % 32) + "), value " + std::to_string(ScalarEncoder::valueOf(model, *side.value));
    std::string when;
    for (const auto& [name, iv] : side.iterations)
      when += (when.empty() ? "" : ", ") + name + " = " + std::to_string(ScalarEncoder::valueOf(model, iv));
    if (!when.empty()) s += " in iteration " + when;
    return s;
  }

  void report(const GlobalStore& a, const GlobalStore& b, const Instance& first, const Instance& second,
              const z3::model& model) {
    std::vector<int64_t> element, offsetA, offsetB;
    for (const z3::expr& x : first.element) element.push_back(model.eval(x, true).get_numeral_int64());
    for (const z3::expr& x : first.offset) offsetA.push_back(ScalarEncoder::valueOf(model, x));
    for (const z3::expr& x : second.offset) offsetB.push_back(ScalarEncoder::valueOf(model, x));
    bool otherBlock = false;
    for (size_t axis = 0; axis < 3; ++axis)
      otherBlock = otherBlock || ScalarEncoder::valueOf(model, first.programIds[axis]) !=
                                     ScalarEncoder::valueOf(model, second.programIds[axis]);
    std::string launch;
    for (size_t i = 0; i < fn_.sizeNames.size(); ++i) {
      z3::expr v = model.eval(sizeVar(i), false);
      if (v.is_numeral()) launch += (launch.empty() ? "" : ", ") + fn_.sizeNames[i] + " = " + std::to_string(ScalarEncoder::valueOf(model, v));
    }
    const std::string& tensor = a.tensor->name;
    std::string text = elementText(tensor, element);
    std::string detail = instanceText(first, model) + " and " + instanceText(second, model) + " both store " + text;
    if (!launch.empty()) detail += " when " + launch;
    std::string who = std::string(otherBlock ? "two blocks" : "two threads of one block");
    // Reported at the later store, labelled at the other (or twice at one).
    Diagnostic& d = diags_.report(DiagId::GlobalStoresOverlap, b.store->range, {who, tensor, detail});
    if (a.store != b.store) d.labels.push_back(Label{a.store->range, "the other store of the same element"});
    Counterexample cx;
    int64_t t = ScalarEncoder::valueOf(model, *second.thread);
    cx.thread = t;
    cx.warp = t / 32;
    cx.lane = t % 32;
    cx.value = ScalarEncoder::valueOf(model, *second.value);
    for (const auto& [name, iv] : second.iterations) cx.iteration.emplace_back(name, ScalarEncoder::valueOf(model, iv));
    cx.facts.emplace_back("element", text);
    cx.facts.emplace_back("offset", shapeText(offsetB));
    cx.facts.emplace_back("other", instanceText(first, model));
    cx.facts.emplace_back("other_thread", std::to_string(ScalarEncoder::valueOf(model, *first.thread)));
    cx.facts.emplace_back("other_value", std::to_string(ScalarEncoder::valueOf(model, *first.value)));
    cx.facts.emplace_back("other_offset", shapeText(offsetA));
    if (!launch.empty()) cx.facts.emplace_back("launch", launch);
    d.counterexample = std::move(cx);
    d.notes.push_back(otherBlock ? "the blocks of a launch run concurrently and nothing orders their stores; give "
                                   "each block its own part of the tensor (index the view by every program id the "
                                   "grid varies)"
                                 : "nothing orders the stores of two threads to global memory; give each thread "
                                   "(each warp, each iteration) its own elements");
  }

  const ir::Function& fn_;
  DiagnosticSink& diags_;
  const Options& options_;
  std::vector<GlobalStore> stores_;
  std::set<const ir::Param*> unmodelled_;  // tensors with a store the encoding does not model
  std::unique_ptr<z3::context> ownContext_;  // only when check() gave none
  z3::context* ctx_ = nullptr;
  SolverBudget budget_{options_};
};

}  // namespace

void checkGlobalSeparation(const ir::Function& fn, DiagnosticSink& diags, const Options& options) {
  SeparationCheck(fn, diags, options).run();
}

}  // namespace argus::checker

// Blocks read only what no other block writes (AG2045): the blocks of a launch
// run concurrently and nothing orders one block's global stores before
// another's loads, so a block that reads an element of a tensor that another
// block of the same launch writes (an in-place update whose tiles shift, a
// kernel that reads back a neighbour's output tile) sees the old value or the
// new one, depending on the schedule.
//
// For each tensor some op writes and some op reads (as the op table declares
// their global effects, ir/ops.def), and each such pair of a write and a read,
// one Z3 query over two copies of the block-uniform scalars (the second's
// program ids and iterations renamed, the runtime sizes shared) and a tile
// coordinate per side: do the two reach one element inside the tensor from
// different blocks? Which thread of a block touches the element does not
// matter here, so the whole tile is the footprint. Elements outside the tensor
// are neither written nor read (masked). A side whose offsets or `if`
// conditions the encoding does not interpret keeps the pair silent; an
// undecided query is AG2004 "cannot prove". Reads and writes by two threads
// of one block are not this check's (a barrier orders them).
#include <z3++.h>

#include <memory>
#include <set>

#include "checker/invariant_check.h"
#include "checker/invariant_scalar.h"
#include "checker/scalar_semantics.h"
#include "checker/solver_budget.h"
#include "ir/ops.h"

namespace argus::checker {

using ir::OpKind;

namespace {

constexpr int64_t kSmallSize = 256;
constexpr uint64_t kLargeLaunchRlimit = 300'000;

struct GlobalAccess {
  const ir::Op* op = nullptr;
  const ir::Op* view = nullptr;
  const ir::Param* tensor = nullptr;
  ScalarScope scope;
  bool write = false;
};

struct Footprint {
  std::unique_ptr<ScalarEncoder> encoder;
  std::vector<z3::expr> constraints, element, programIds;
  std::vector<std::pair<std::string, z3::expr>> iterations;
};

class CrossBlockCheck {
 public:
  CrossBlockCheck(const ir::Function& fn, DiagnosticSink& diags, const Options& options)
      : fn_(fn), diags_(diags), options_(options) {}

  void run() {
    budget_.setTraceLabel("cross-block");
    collect(fn_.body);
    for (const GlobalAccess& w : accesses_) {
      if (!w.write) continue;
      for (const GlobalAccess& r : accesses_) {
        if (r.write || r.tensor != w.tensor) continue;
        if (budget_.spent()) return cannotProve(w, r, budget_.spentReason());
        try {
          if (checkPair(w, r)) break;  // one report per write is enough
        } catch (const z3::exception& e) {
          cannotProve(w, r, std::string("the solver failed: ") + e.msg());
        }
      }
    }
  }

 private:
  void collect(const ir::Block& body) {
    ScalarScope scope;
    forEachOpInScope(body, scope, [&](const ir::Op& op, const ScalarScope& around) {
      for (const ir::MemoryEffect& effect : ir::memoryEffects(fn_, op)) {
        if (effect.space != ir::MemSpace::Global) continue;
        const ir::Op* view = fn_.values[effect.view].def;
        if (!view || view->kind != OpKind::View || view->operands.empty()) continue;
        const ir::ValueId base = ir::ViewOp(*view).base();
        const ir::Param* tensor = nullptr;
        for (const ir::Param& p : fn_.params)
          if (p.value == base && p.kind == ir::ParamKind::Tensor) tensor = &p;
        if (!tensor || view->operands.size() != tensor->dims.size() + 1) continue;
        bool encodable = true;
        for (const auto& [cond, taken] : around.conditions) encodable = encodable && conditionEncodable(fn_, cond);
        if (encodable) accesses_.push_back({&op, view, tensor, around, effect.decl->access == ir::MemoryAccess::Write});
      }
    });
  }

  z3::expr bv(int64_t v) { return ctx_->bv_val(v, 32); }
  z3::expr sizeVar(size_t index) {  // the name ScalarEncoder gives it
    return ctx_->bv_const(("size_" + fn_.sizeNames[index]).c_str(), 32);
  }

  // The elements of `a`'s tile, in `suffix`'s copy of the block's scalars. False: not encodable.
  bool encode(const GlobalAccess& a, const std::string& suffix, Footprint& side) {
    side.encoder = std::make_unique<ScalarEncoder>(*ctx_, fn_, a.scope);
    ScalarEncoder& enc = *side.encoder;
    z3::expr_vector from(*ctx_), to(*ctx_);
    for (int axis = 0; axis < 3; ++axis) {
      from.push_back(ctx_->bv_const(("program_id" + std::to_string(axis)).c_str(), 32));
      to.push_back(ctx_->bv_const(("program_id" + std::to_string(axis) + suffix).c_str(), 32));
      side.programIds.push_back(to.back());
    }
    for (size_t l = 0; l < a.scope.loops.size(); ++l) {
      from.push_back(ctx_->bv_const(("j" + std::to_string(l)).c_str(), 32));
      to.push_back(ctx_->bv_const(("j" + std::to_string(l) + suffix).c_str(), 32));
    }
    auto renamed = [&](z3::expr e) { return e.substitute(from, to); };
    std::vector<z3::expr> offset;
    for (size_t d = 1; d < a.view->operands.size(); ++d) offset.push_back(enc.scalar(a.view->operands[d]));
    for (const ir::Op* loop : a.scope.loops)
      if (!loop->regions.empty() && !loop->regions[0].args.empty()) {
        const ir::ValueId iv = loop->regions[0].args[0];
        const std::string& name = fn_.values[iv].name;
        side.iterations.emplace_back(name.empty() ? "the loop variable" : name, renamed(enc.scalar(iv)));
      }
    if (!enc.opaqueNames().empty()) return false;
    for (const z3::expr& c : enc.constraints()) side.constraints.push_back(renamed(c));
    for (int axis = 0; axis < 3; ++axis) {
      auto grid = encodeLaunchInt(*ctx_, fn_.grid[axis], [&](int64_t i) { return sizeVar(static_cast<size_t>(i)); });
      if (!grid) return false;
      const int64_t maxBlocks = axis == 0 ? (int64_t{1} << 31) - 1 : 65535;
      const z3::expr& pid = side.programIds[static_cast<size_t>(axis)];
      side.constraints.push_back(pid >= 0 && z3::sext(pid, 32) < *grid && *grid <= ctx_->bv_val(maxBlocks, 64));
    }
    const std::vector<int64_t>& tile = fn_.typeOf(a.view->results[0]).shape;
    const size_t r = a.tensor->dims.size(), k = tile.size();
    if (k > r) return false;
    for (size_t d = 0; d < r; ++d) {
      z3::expr x = z3::sext(renamed(offset[d]), 32);
      if (d + k >= r) {
        z3::expr c = ctx_->bv_const(("tile" + std::to_string(d) + suffix).c_str(), 32);
        side.constraints.push_back(z3::ult(c, bv(tile[d + k - r])));
        x = x + z3::zext(c, 32);
      }
      const ir::DimRef& dim = a.tensor->dims[d];
      z3::expr extent = dim.constant >= 0 ? ctx_->bv_val(dim.constant, 64)
                                          : z3::sext(sizeVar(static_cast<size_t>(dim.sizeIndex)), 32);
      side.constraints.push_back(x >= 0 && x < extent);  // elements outside the tensor: masked
      side.element.push_back(x);
    }
    return true;
  }

  // True when the pair was reported.
  bool checkPair(const GlobalAccess& w, const GlobalAccess& r) {
    if (!ctx_) ctx_ = &SolverBudget::contextFor(options_, ownContext_);
    Footprint writer, reader;
    if (!encode(w, "_w", writer) || !encode(r, "_r", reader)) return false;
    z3::solver solver(*ctx_, "QF_BV");
    for (const z3::expr& c : writer.constraints) solver.add(c);
    for (const z3::expr& c : reader.constraints) solver.add(c);
    for (size_t d = 0; d < writer.element.size(); ++d) solver.add(writer.element[d] == reader.element[d]);
    z3::expr otherBlock = ctx_->bool_val(false);
    for (size_t axis = 0; axis < 3; ++axis) otherBlock = otherBlock || writer.programIds[axis] != reader.programIds[axis];
    solver.add(otherBlock);
    z3::expr small = ctx_->bool_val(true);
    for (size_t i = 0; i < fn_.sizeNames.size(); ++i) small = small && z3::ule(sizeVar(i), bv(kSmallSize));
    solver.push();
    solver.add(small);
    budget_.limit(solver);
    z3::check_result result = budget_.check(solver);
    if (result == z3::unsat) {
      solver.pop();
      budget_.limit(solver, kLargeLaunchRlimit);
      result = budget_.check(solver);
      if (result == z3::unknown) {
        cannotProve(w, r, "it holds in every launch whose runtime sizes are all at most " + std::to_string(kSmallSize) +
                              ", but for larger launches the solver gave up (" +
                              budget_.unknownReason(solver, kLargeLaunchRlimit) + ")");
        return false;
      }
    }
    if (result == z3::unknown) {
      cannotProve(w, r, "the solver gave up (" + budget_.unknownReason(solver) + ")");
      return false;
    }
    if (result == z3::unsat) return false;
    report(w, r, writer, reader, minimize(solver.assertions(), writer, reader).value_or(solver.get_model()));
    return true;
  }

  // Smallest launch, then the first blocks, iterations and tile elements.
  std::optional<z3::model> minimize(const z3::expr_vector& assertions, const Footprint& writer, const Footprint& reader) {
    z3::optimize opt(*ctx_);
    budget_.limit(opt);
    for (const z3::expr& e : assertions) opt.add(e);
    for (size_t i = 0; i < fn_.sizeNames.size(); ++i) opt.minimize(sizeVar(i));
    for (const Footprint* side : {&reader, &writer}) {
      for (size_t axis = 3; axis-- > 0;) opt.minimize(side->programIds[axis]);
      for (const auto& [name, iv] : side->iterations) opt.minimize(iv);
    }
    for (const z3::expr& x : reader.element) opt.minimize(x);
    if (budget_.check(opt) != z3::sat) return std::nullopt;
    return opt.get_model();
  }

  std::string blockText(const Footprint& side, const z3::model& model) const {
    std::string s;
    for (size_t axis = 0; axis < 3; ++axis)
      if (!(fn_.grid[axis].kind == ir::LaunchExpr::Kind::Const && fn_.grid[axis].value == 1))
        s += (s.empty() ? "" : ", ") + std::string("program_id(") + std::to_string(axis) +
             ") = " + std::to_string(ScalarEncoder::valueOf(model, side.programIds[axis]));
    std::string when;
    for (const auto& [name, iv] : side.iterations)
      when += (when.empty() ? "" : ", ") + name + " = " + std::to_string(ScalarEncoder::valueOf(model, iv));
    if (!when.empty()) s += " in iteration " + when;
    return "block " + s;
  }

  void report(const GlobalAccess& w, const GlobalAccess& r, const Footprint& writer, const Footprint& reader,
              const z3::model& model) {
    std::string element = w.tensor->name + "[";
    for (size_t d = 0; d < reader.element.size(); ++d)
      element += (d ? ", " : "") + std::to_string(model.eval(reader.element[d], true).get_numeral_int64());
    element += "]";
    std::string launch;
    for (size_t i = 0; i < fn_.sizeNames.size(); ++i) {
      z3::expr v = model.eval(sizeVar(i), false);
      if (v.is_numeral()) launch += (launch.empty() ? "" : ", ") + fn_.sizeNames[i] + " = " + std::to_string(ScalarEncoder::valueOf(model, v));
    }
    const std::string readerText = blockText(reader, model), writerText = blockText(writer, model);
    std::string detail = readerText + " reads it and " + writerText + " writes it";
    if (!launch.empty()) detail += " when " + launch;
    Diagnostic& d = diags_.report(DiagId::GlobalReadOfOtherBlocksWrite, r.op->range,
                                  {std::string(ir::opKindName(r.op->kind)), element, w.tensor->name, detail});
    d.labels.push_back(Label{w.op->range, "another block writes '" + w.tensor->name + "' here"});
    Counterexample cx;
    for (const auto& [name, iv] : reader.iterations) cx.iteration.emplace_back(name, ScalarEncoder::valueOf(model, iv));
    cx.facts.emplace_back("element", element);
    cx.facts.emplace_back("reader", readerText);
    cx.facts.emplace_back("writer", writerText);
    if (!launch.empty()) cx.facts.emplace_back("launch", launch);
    d.counterexample = std::move(cx);
    d.notes.push_back("the blocks of a launch run concurrently and nothing orders one block's stores before another "
                      "block's loads, so the read sees the old value or the new one; read the input from a tensor "
                      "this launch does not write (write the result to another tensor), or split the kernel into "
                      "two launches");
  }

  void cannotProve(const GlobalAccess& w, const GlobalAccess& r, const std::string& why) {
    Diagnostic& d = diags_.report(DiagId::CheckerCannotProve, r.op->range,
                                  {"no other block writes the elements of '" + w.tensor->name + "' this reads", why});
    d.labels.push_back(Label{w.op->range, "the write of '" + w.tensor->name + "'"});
  }

  const ir::Function& fn_;
  DiagnosticSink& diags_;
  const Options& options_;
  std::vector<GlobalAccess> accesses_;
  std::unique_ptr<z3::context> ownContext_;
  z3::context* ctx_ = nullptr;
  SolverBudget budget_{options_};
};

}  // namespace

void checkCrossBlockReads(const ir::Function& fn, DiagnosticSink& diags, const Options& options) {
  CrossBlockCheck(fn, diags, options).run();
}

}  // namespace argus::checker

// Transaction accounting of bulk copies (AG2053, AG2054): each
// mbarrier_expect_tx arms a phase with a byte count, and the copy_bulk ops
// that follow it in the same block on the same mbarrier (up to the next
// mbarrier operation on that buffer) must write exactly that many bytes; a
// copy_bulk with no such mbarrier_expect_tx before it completes a phase nobody
// announced. The mbarrier indices of the copies must equal the expect_tx's in
// every iteration (syntactically, or by one Z3 query).
#include <z3++.h>

#include <algorithm>
#include <memory>

#include "checker/invariant_scalar.h"
#include "checker/mbarrier_events.h"
#include "checker/report_text.h"
#include "checker/mbarrier_check.h"
#include "checker/solver_budget.h"
#include "ir/ops.h"

namespace argus::checker {

using ir::Block;
using ir::Op;
using ir::OpKind;

int64_t bulkCopyBytes(const ir::Function& fn, const Op& copy) {
  if (copy.operands.empty()) return 0;
  const ir::Type& t = fn.typeOf(ir::CopyBulkOp(copy).dst());
  int64_t n = 1;
  for (int64_t e : t.shape) n *= e;
  return n * std::max(1, ir::dtypeBits(t.dtype) / 8);
}

namespace {

std::string nameOf(const ir::Function& fn, ir::ValueId id, const char* fallback) {
  return id < fn.values.size() && !fn.values[id].name.empty() ? fn.values[id].name : fallback;
}

class TxCheck {
 public:
  TxCheck(const ir::Function& fn, DiagnosticSink& diags, const SourceFile* file, const Options& options)
      : fn_(fn), diags_(diags), file_(file), options_(options) {}

  void run() { block(fn_.body); }

 private:
  bool isMbarrierOp(const Op& op, ir::ValueId bars) const {
    return ir::isMbarrierSync(ir::opInfo(op.kind).sync) && mbarrierOperands(op).bars == bars;
  }

  // The index as the user would write it: a constant, a name, or `(kt + 2) % 3`.
  std::string indexText(ir::ValueId index, int depth = 0) const {
    const Op* def = fn_.values[index].def;
    if (std::optional<int64_t> value = ir::constantInt(fn_, index)) return std::to_string(*value);
    if (!fn_.values[index].name.empty()) return fn_.values[index].name;
    if (def && def->kind == OpKind::Binary && def->operands.size() == 2 && depth < 4) {
      const char* sym = nullptr;
      switch (ir::BinaryOp(*def).binaryKind()) {
        case ir::BinaryKind::Add: sym = " + "; break;
        case ir::BinaryKind::Sub: sym = " - "; break;
        case ir::BinaryKind::Mul: sym = " * "; break;
        case ir::BinaryKind::Div: sym = " // "; break;
        case ir::BinaryKind::Rem: sym = " % "; break;
        default: break;
      }
      if (sym) {
        const ir::BinaryOp bin(*def);
        std::string text = indexText(bin.lhs(), depth + 1) + sym + indexText(bin.rhs(), depth + 1);
        return depth == 0 ? text : "(" + text + ")";
      }
    }
    return "its index";
  }

  std::string at(SourceRange range) const {
    std::string p = sourcePosition(file_, range);
    return p.empty() ? "" : " at " + p;
  }

  void block(const Block& b) {
    std::vector<const Op*> covered;
    for (size_t i = 0; i < b.ops.size(); ++i) {
      const Op& op = *b.ops[i];
      if (op.kind == OpKind::MbarrierExpectTx && op.operands.size() == 2) {
        const ir::ValueId bars = ir::MbarrierExpectTxOp(op).bars();
        std::vector<const Op*> copies;
        for (size_t k = i + 1; k < b.ops.size(); ++k) {
          const Op& next = *b.ops[k];
          if (isMbarrierOp(next, bars)) break;
          if (next.kind == OpKind::CopyBulk && next.operands.size() == 4 && ir::CopyBulkOp(next).bars() == bars) {
            copies.push_back(&next);
            covered.push_back(&next);
          }
        }
        checkPhase(op, copies);
      }
      if (op.kind == OpKind::CopyBulk && op.operands.size() == 4 &&
          std::find(covered.begin(), covered.end(), &op) == covered.end()) {
        const ir::CopyBulkOp copy(op);
        Diagnostic& d = diags_.report(
            DiagId::CopyBulkUnannounced, op.range,
            {indexText(copy.index()), nameOf(fn_, copy.bars(), "mbarriers"),
             "no mbarrier_expect_tx on that mbarrier comes before it in this block, so the phase it completes "
             "expects no bytes from it"});
        d.notes.push_back("issue mbarrier_expect_tx(" + nameOf(fn_, copy.bars(), "bars") + ", " +
                          indexText(copy.index()) + ") bytes " + std::to_string(bulkCopyBytes(fn_, op)) +
                          " right before this copy_bulk");
      }
      if (op.kind == OpKind::For) {
        scope_.loops.push_back(&op);
        for (const Block& r : op.regions) block(r);
        scope_.loops.pop_back();
      } else if (op.kind == OpKind::If && !op.operands.empty()) {
        for (size_t r = 0; r < op.regions.size(); ++r) {
          scope_.conditions.push_back({ir::IfOp(op).condition(), r == 0});
          block(op.regions[r]);
          scope_.conditions.pop_back();
        }
      } else {
        for (const Block& r : op.regions) block(r);
      }
    }
  }

  // `expect`: an mbarrier_expect_tx; `copies`: the copy_bulk ops that follow it on its mbarrier.
  void checkPhase(const Op& expect, const std::vector<const Op*>& copies) {
    const ir::MbarrierExpectTxOp expectTx(expect);
    ir::ValueId bars = expectTx.bars();
    int64_t total = 0;
    std::string parts;
    for (const Op* c : copies) {
      int64_t bytes = bulkCopyBytes(fn_, *c);
      total += bytes;
      const ir::CopyBulkOp copy(*c);
      const Op* view = fn_.values[copy.dst()].def;
      std::string buffer =
          view && view->kind == ir::OpKind::View ? nameOf(fn_, ir::ViewOp(*view).base(), "shared") : "shared";
      parts += (parts.empty() ? "" : " and ") + ("'" + buffer + "' (" + std::to_string(bytes) + " bytes)");
      if (copy.index() != expectTx.index()) differentIndex(expect, *c);
    }
    const int64_t announced = expectTx.bytes();
    if (total == announced) return;
    std::string why = copies.empty() ? "no copy_bulk on that mbarrier follows it in this block, so the phase never completes"
                      : total < announced
                          ? "they write " + parts + "; the phase waits for bytes that never arrive, so its mbarrier_wait hangs"
                          : "they write " + parts + "; the surplus completes transactions of a phase that has not announced them";
    Diagnostic& d = diags_.report(DiagId::MbarrierTxCount, expect.range,
                                  {std::to_string(announced), indexText(expectTx.index()),
                                   nameOf(fn_, bars, "mbarriers"), std::to_string(total), why});
    for (const Op* c : copies)
      d.labels.push_back(Label{c->range, "this copy_bulk writes " + std::to_string(bulkCopyBytes(fn_, *c)) + " bytes"});
    Counterexample cx;
    cx.facts.emplace_back("announced", std::to_string(announced));
    cx.facts.emplace_back("copied", std::to_string(total));
    d.counterexample = std::move(cx);
    d.notes.push_back("announce " + std::to_string(total) +
                      " bytes: the elements of every copy_bulk of the phase times the size of their dtype");
  }

  // The copy names its mbarrier with another value than the expect_tx: equal in every iteration?
  void differentIndex(const Op& expect, const Op& copy) {
    const std::optional<int64_t> a = ir::constantInt(fn_, ir::MbarrierExpectTxOp(expect).index());
    const std::optional<int64_t> b = ir::constantInt(fn_, ir::CopyBulkOp(copy).index());
    if (a && b && *a == *b) return;
    try {
      if (!ctx_) ctx_ = &SolverBudget::contextFor(options_, ownContext_);
      ScalarEncoder enc(*ctx_, fn_, scope_);
      z3::expr x = enc.scalar(ir::MbarrierExpectTxOp(expect).index()), y = enc.scalar(ir::CopyBulkOp(copy).index());
      z3::solver solver = bitVectorSolver(*ctx_);
      budget_.limit(solver);
      for (const z3::expr& c : enc.constraints()) solver.add(c);
      solver.add(x != y);
      z3::check_result r = budget_.check(solver);
      if (r == z3::unsat) return;
      if (r == z3::unknown) {
        diags_.report(DiagId::CheckerCannotProve, copy.range,
                      {"this copy_bulk completes on the mbarrier its mbarrier_expect_tx armed",
                       "the solver gave up (" + budget_.unknownReason(solver) + ")"});
        return;
      }
      z3::expr_vector all(*ctx_);
      for (const z3::expr& c : enc.constraints()) all.push_back(c);
      all.push_back(x != y);
      std::optional<z3::model> model = enc.minimize(all, budget_);
      if (!model) model = solver.get_model();
      int64_t ex = ScalarEncoder::valueOf(*model, x), cy = ScalarEncoder::valueOf(*model, y);
      Diagnostic& d = diags_.report(
          DiagId::CopyBulkUnannounced, copy.range,
          {std::to_string(cy), nameOf(fn_, ir::CopyBulkOp(copy).bars(), "mbarriers"),
           "the mbarrier_expect_tx" + at(expect.range) + " armed mbarrier " + std::to_string(ex) +
               ", so the bytes of this copy complete a phase that does not expect them"});
      d.labels.push_back(Label{expect.range, "arms mbarrier " + std::to_string(ex) + " here"});
      Counterexample cx;
      cx.iteration = enc.iterationValues(*model);
      cx.facts.emplace_back("copy mbarrier", std::to_string(cy));
      cx.facts.emplace_back("armed mbarrier", std::to_string(ex));
      std::string launch;
      for (const auto& [name, v] : enc.launchValues(*model)) launch += (launch.empty() ? "" : ", ") + name + " = " + std::to_string(v);
      if (!launch.empty()) cx.facts.emplace_back("launch", launch);
      d.counterexample = std::move(cx);
    } catch (const z3::exception& e) {
      diags_.report(DiagId::CheckerCannotProve, copy.range,
                    {"this copy_bulk completes on the mbarrier its mbarrier_expect_tx armed",
                     std::string("the solver failed: ") + e.msg()});
    }
  }

  const ir::Function& fn_;
  DiagnosticSink& diags_;
  const SourceFile* file_;
  const Options& options_;
  ScalarScope scope_;
  std::unique_ptr<z3::context> ownContext_;  // only when check() gave none
  z3::context* ctx_ = nullptr;
  SolverBudget budget_{options_};
};

}  // namespace

void checkBulkTransactions(const ir::Function& fn, DiagnosticSink& diags, const SourceFile* file,
                           const Options& options) {
  TxCheck(fn, diags, file, options).run();
}

}  // namespace argus::checker

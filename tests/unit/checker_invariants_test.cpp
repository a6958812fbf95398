// The built-in invariants (checker/invariant_*.cpp): what they must not report
// (safe kernels that look like the corpus bugs) and an independent recomputation
// of every bank-conflict claim of the corpus; the budgets' edges are golden files
// (tests/golden/diagnostics/checker_shared_budget_*.ag, checker_registers_*.ag).
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <set>

#include "checker/checker.h"
#include "checker_corpus_util.h"
#include "driver/compilation.h"
#include "ir/ir.h"
#include "ir/ops.h"
#include "test_sources.h"

namespace argus {
namespace {

struct Checked {
  std::unique_ptr<Compilation> compilation;
  DiagnosticSink diags;
};

// Sema, then the whole checker; the kernel must pass sema.
std::unique_ptr<Checked> check(const std::string& source, checker::Options options = {}) {
  auto out = std::make_unique<Checked>();
  out->compilation = std::make_unique<Compilation>(SourceFile("test.ag", source), CompileOptions{});
  const ir::Module& module = out->compilation->ir();
  for (const Diagnostic& d : out->compilation->diagnostics()) ADD_FAILURE() << "sema: " << d.code() << " " << d.message;
  checker::check(module, out->diags, &out->compilation->source(), options);
  return out;
}

// The view a Load or Store accesses.
ir::ValueId accessedView(const ir::Op& op) {
  return op.kind == ir::OpKind::Store ? ir::StoreOp(op).view() : ir::LoadOp(op).view();
}

std::string describe(const DiagnosticSink& diags) {
  std::string s;
  for (const Diagnostic& d : diags.diagnostics()) s += std::string(d.code()) + ": " + d.message + "\n";
  return s;
}

// ---- bounds

// The require() conditions are assumed: tests/golden/diagnostics/checker_requirements_assumed.ag.

TEST(CheckerBounds, AnUndecidedQueryIsNeverSilence) {
  checker::Options options;
  options.queryRlimit = 1;
  auto c = check(testing::readTestKernel("checker_invariants/nonlinear_shared_index.ag"), options);
  // The view reaches s[4] (and s[-4]): with 1 resource unit the solver finds it or gives up, never "holds".
  bool reported = false;
  for (const Diagnostic& d : c->diags.diagnostics()) {
    std::string code = d.code();
    if (code == "AG2030" || code == "AG2034") reported = true;
  }
  EXPECT_TRUE(reported) << describe(c->diags);
}

// ---- shared-memory budget

// One buffer too many, reported once and never again by code generation:
// tests/golden/diagnostics/checker_shared_budget_one_buffer_too_many.ag.

// ---- bank conflicts

// Recomputes every AG2032 of the corpus from the IR with ir::Distribution: the
// named bank receives exactly `replay` distinct words from the lanes of warp 0.
TEST(CheckerBanks, CorpusReplayFactorsAreRecomputed) {
  int checked = 0;
  for (const auto& path : corpus::corpusFiles()) {
    std::string text = corpus::readFile(path);
    if (text.find("AG2032") == std::string::npos) continue;
    Compilation c(SourceFile(path.filename().string(), text), CompileOptions{});
    c.check();
    for (const Diagnostic& d : c.diagnostics()) {
      if (std::string(d.code()) != "AG2032") continue;
      std::map<std::string, std::string> facts(d.counterexample->facts.begin(), d.counterexample->facts.end());
      int64_t bank = std::stoll(facts["bank"]), replay = std::stoll(facts["replay"]);
      const ir::Function& fn = *c.ir().functions.at(0);
      // The access: a load or store at the diagnostic's range, on a shared view.
      std::function<const ir::Op*(const ir::Block&)> find = [&](const ir::Block& block) -> const ir::Op* {
        for (const auto& op : block.ops) {
          if ((op->kind == ir::OpKind::Load || op->kind == ir::OpKind::Store) && op->range == d.range &&
              fn.typeOf(accessedView(*op)).space == ir::MemSpace::Shared)
            return op.get();
          for (const ir::Block& r : op->regions)
            if (const ir::Op* f = find(r)) return f;
        }
        return nullptr;
      };
      const ir::Op* op = find(fn.body);
      ASSERT_TRUE(op) << path.filename();
      bool store = op->kind == ir::OpKind::Store;
      const ir::Layout& layout = store ? fn.typeOf(ir::StoreOp(*op).value()).layout : fn.typeOf(op->results[0]).layout;
      ir::Distribution dist = ir::Distribution::of(layout, fn.numWarps);
      const ir::Op* view = fn.values[accessedView(*op)].def;
      const ir::Type& buffer = fn.typeOf(ir::ViewOp(*view).base());
      int64_t bytes = ir::dtypeBits(buffer.dtype) / 8;
      std::set<int64_t> words;
      for (int64_t lane = 0; lane < 32; ++lane) {
        if (store && !dist.isPrimaryOwner(lane)) continue;
        std::vector<int64_t> coord = dist.coordinate(lane, 0);
        int64_t linear = 0;
        size_t rank = buffer.shape.size(), k = coord.size();
        for (size_t dim = 0; dim < rank; ++dim) {
          const ir::Op* o = fn.values[view->operands[dim + 1]].def;
          int64_t offset = o && o->kind == ir::OpKind::Const ? ir::ConstOp(*o).intValue() : 0;
          linear = linear * buffer.shape[dim] + offset + (dim + k >= rank ? coord[dim + k - rank] : 0);
        }
        int64_t word = buffer.swizzle.apply(linear) * bytes / 4;
        if (word % 32 == bank) words.insert(word);
      }
      EXPECT_EQ(static_cast<int64_t>(words.size()), replay) << path.filename();
      ++checked;
    }
  }
  EXPECT_GE(checked, 3);
}

// ---- register budget

// 16-bit mma tiles counted packed, and the largest live tiles labelled:
// tests/golden/diagnostics/checker_registers_sixteen_bit_mma_tiles_pack.ag and
// checker_registers_largest_live_tiles.ag.

}  // namespace
}  // namespace argus

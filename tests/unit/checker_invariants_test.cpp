// The built-in invariants (checker/invariant_*.cpp): what they must not report
// (safe kernels that look like the corpus bugs), the edges of the budgets, and
// an independent recomputation of every bank-conflict claim of the corpus.
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <set>

#include "checker/checker.h"
#include "checker_corpus_util.h"
#include "driver/compilation.h"
#include "ir/ir.h"

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

std::string describe(const DiagnosticSink& diags) {
  std::string s;
  for (const Diagnostic& d : diags.diagnostics()) s += std::string(d.code()) + ": " + d.message + "\n";
  return s;
}

std::vector<const Diagnostic*> withCode(const DiagnosticSink& diags, const std::string& code) {
  std::vector<const Diagnostic*> out;
  for (const Diagnostic& d : diags.diagnostics())
    if (code == d.code()) out.push_back(&d);
  return out;
}

// ---- bounds

// The require() conditions are assumed: tests/golden/diagnostics/checker_requirements_assumed.ag.

TEST(CheckerBounds, AnUndecidedQueryIsNeverSilence) {
  checker::Options options;
  options.queryRlimit = 1;
  auto c = check(R"(@kernel(grid=(1,), warps=4)
def hard(x: Tensor[f32, (M, N, K)], y: Tensor[f32, (128,)]):
    s = shared(f32, (4, 128))
    s[0] = load(x.tile((128,))[0, 0, 0])
    barrier()
    y.tile((128,))[0] = load(s[(M * N * K) % 5])
)",
                 options);
  // The view reaches s[4] (and s[-4]): with 1 resource unit the solver finds it or gives up, never "holds".
  bool reported = false;
  for (const Diagnostic& d : c->diags.diagnostics()) {
    std::string code = d.code();
    if (code == "AG2030" || code == "AG2034") reported = true;
  }
  EXPECT_TRUE(reported) << describe(c->diags);
}

// ---- shared-memory budget

TEST(CheckerBudget, OneBufferTooManyIsReportedOnceAndStopsCodegen) {
  std::string source = R"(@kernel(grid=(1,), warps=4)
def over(x: Tensor[f32, (128,)], y: Tensor[f32, (128,)]):
    a = shared(f32, (256, 128))
    b = shared(f32, (198, 129))
    a[0] = load(x)
    b.tile((128,))[0, 0] = load(x)
    barrier()
    y.tile((128,))[0] = load(a[0]) + load(b.tile((128,))[0, 0])
)";
  Compilation c(SourceFile("over.ag", source), CompileOptions{});
  EXPECT_TRUE(c.ptx().empty());
  ASSERT_EQ(c.diagnostics().size(), 1u);  // AG2031 only: codegen's AG5001 never sees the kernel
  const Diagnostic& d = c.diagnostics()[0];
  EXPECT_STREQ(d.code(), "AG2031");
  EXPECT_EQ(c.source().lineCol(d.range.begin).line, 4u);  // 'b' passes the limit
  EXPECT_EQ(d.labels.size(), 1u);
  EXPECT_NE(d.message.find("233240 bytes"), std::string::npos) << d.message;
  ASSERT_FALSE(d.notes.empty());
  EXPECT_NE(d.notes[0].find("shrink the buffers by 792 bytes"), std::string::npos) << d.notes[0];
}

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
              fn.typeOf(op->operands[0]).space == ir::MemSpace::Shared)
            return op.get();
          for (const ir::Block& r : op->regions)
            if (const ir::Op* f = find(r)) return f;
        }
        return nullptr;
      };
      const ir::Op* op = find(fn.body);
      ASSERT_TRUE(op) << path.filename();
      bool store = op->kind == ir::OpKind::Store;
      const ir::Layout& layout = store ? fn.typeOf(op->operands[1]).layout : fn.typeOf(op->results[0]).layout;
      ir::Distribution dist = ir::Distribution::of(layout, fn.numWarps);
      const ir::Op* view = fn.values[op->operands[0]].def;
      const ir::Type& buffer = fn.typeOf(view->operands[0]);
      int64_t bytes = ir::dtypeBits(buffer.dtype) / 8;
      std::set<int64_t> words;
      for (int64_t lane = 0; lane < 32; ++lane) {
        if (store && !dist.isPrimaryOwner(lane)) continue;
        std::vector<int64_t> coord = dist.coordinate(lane, 0);
        int64_t linear = 0;
        size_t rank = buffer.shape.size(), k = coord.size();
        for (size_t dim = 0; dim < rank; ++dim) {
          const ir::Op* o = fn.values[view->operands[dim + 1]].def;
          int64_t offset = o && o->kind == ir::OpKind::Const ? o->attrs.i : 0;
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

// Found on the mma.sync attention at BM = 128: p, a (128, 64) bf16 tile in the mma layout,
// was counted as 64 registers where its packed pairs take 32, so a kernel that ptxas fits
// drew a warning.
TEST(CheckerRegisters, SixteenBitMmaTilesPackTwoValuesToARegister) {
  auto c = check(R"(@kernel(grid=(1,), warps=4)
def packed(y: Tensor[f32, (128, 128)]):
    a = zeros(f32, (128, 128), layout=mma(warps=(4, 1))) + 1.0
    p = cast(a, bf16)
    b = a * 2.0
    y.tile((128, 128))[0, 0] = a + b * b + cast(p, f32) * cast(p, f32)
)");
  auto found = withCode(c->diags, "AG2033");
  ASSERT_EQ(found.size(), 1u) << describe(c->diags);
  bool sawPacked = false;
  for (const auto& label : found[0]->labels)
    sawPacked |= label.message.find("'p', a (128, 128) bf16 tile, takes 64 registers") != std::string::npos;
  EXPECT_TRUE(sawPacked) << describe(c->diags);
}

TEST(CheckerRegisters, TheLargestLiveTilesAreLabelled) {
  auto c = check(R"(@kernel(grid=(1,), warps=1)
def pressure(x: Tensor[f32, (64, 128)], y: Tensor[f32, (64, 128)]):
    a = load(x)
    b = exp(a)
    y.tile((64, 128))[0, 0] = a + b * b
)");
  auto found = withCode(c->diags, "AG2033");
  ASSERT_EQ(found.size(), 1u) << describe(c->diags);
  EXPECT_EQ(found[0]->severity, Severity::Warning);
  EXPECT_NE(found[0]->message.find("about 512 registers"), std::string::npos) << found[0]->message;
  ASSERT_GE(found[0]->labels.size(), 2u);
  EXPECT_NE(found[0]->labels[0].message.find("'a', a (64, 128) f32 tile, takes 256 registers"), std::string::npos)
      << found[0]->labels[0].message;
}

}  // namespace
}  // namespace argus

// Replays the built-in "the operands of a dot agree in K" (AG2035). For every
// corpus kernel whose only error is AG2035, the CPU interpreter runs it at the
// counterexample's launch on one-hot inputs: column a_k of A is all ones,
// row b_k of B is all ones, everything else zero. Then the true product A @ B
// is zero everywhere (a_k != b_k), and C[row, col] counts the products in
// which the kernel paired A's column a_k with B's row b_k for that output
// element. The checker says the dot does so for acc[m, n] of the named block:
// C at that element must be non-zero. (The corpus kernels store acc at tile
// (program_id(0), program_id(1)) of C, which the test relies on.)
#include <gtest/gtest.h>

#include <regex>

#include "checker_corpus_util.h"
#include "driver/compilation.h"
#include "ir/ir.h"
#include "ir/ops.h"
#include "runtime/interp/interpreter.h"

namespace argus::corpus {
namespace {

std::string fact(const Diagnostic& d, const std::string& name) {
  for (const auto& [key, value] : d.counterexample->facts)
    if (key == name) return value;
  return "";
}

std::map<std::string, int64_t> namedValues(const std::string& text) {
  std::map<std::string, int64_t> out;
  std::regex pair(R"(([A-Za-z_][A-Za-z0-9_]*(?:\([0-2]\))?) = (-?[0-9]+))");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), pair); it != std::sregex_iterator(); ++it)
    out[(*it)[1]] = std::stoll((*it)[2]);
  return out;
}

class DotReplay : public ::testing::TestWithParam<fs::path> {};

TEST_P(DotReplay, OneHotInputsShowTheMismatchedProduct) {
  const fs::path& path = GetParam();
  std::string text = readFile(path);
  Compilation c(SourceFile(path.filename().string(), text), CompileOptions{});
  c.check();
  const Diagnostic* finding = nullptr;
  for (const Diagnostic& d : c.diagnostics()) {
    if (d.severity != Severity::Error) continue;
    ASSERT_EQ(std::string(d.code()), "AG2035") << path.filename() << ": " << d.message;
    finding = &d;
  }
  ASSERT_TRUE(finding && finding->counterexample) << path.filename() << ": no AG2035 with a counterexample";
  const ir::Function& fn = *c.ir().functions.at(0);

  int64_t aK = std::stoll(fact(*finding, "a_k")), bK = std::stoll(fact(*finding, "b_k"));
  ASSERT_NE(aK, bK);
  std::smatch m;
  std::string product = fact(*finding, "product");
  ASSERT_TRUE(std::regex_search(product, m, std::regex(R"(acc\[([0-9]+), ([0-9]+)\])"))) << product;
  int64_t row = std::stoll(m[1]), col = std::stoll(m[2]);
  std::map<std::string, int64_t> launch = namedValues(fact(*finding, "launch"));
  const ir::Op* dot = nullptr;
  std::function<void(const ir::Block&)> find = [&](const ir::Block& block) {
    for (const auto& op : block.ops) {
      if (op->kind == ir::OpKind::Dot && op->range == finding->range) dot = op.get();
      for (const ir::Block& region : op->regions) find(region);
    }
  };
  find(fn.body);
  ASSERT_TRUE(dot) << "the diagnostic is not at a dot";
  const std::vector<int64_t>& accShape = fn.values[ir::DotOp(*dot).acc()].type.shape;
  row += launch["program_id(0)"] * accShape[0];
  col += launch["program_id(1)"] * accShape[1];

  // Sizes: the counterexample's, with K large enough to hold both K indices.
  std::map<std::string, int64_t> sizes;
  for (const auto& [name, value] : launch)
    if (name.find('(') == std::string::npos) sizes[name] = value;
  sizes["K"] = std::max({sizes["K"], aK + 1, bK + 1});
  std::vector<interp::HostTensor> tensors;
  for (const ir::Param& p : fn.params) {
    if (p.kind != ir::ParamKind::Tensor) continue;
    std::vector<int64_t> shape;
    for (const ir::DimRef& dim : p.dims)
      shape.push_back(dim.constant >= 0 ? dim.constant : sizes[fn.sizeNames[static_cast<size_t>(dim.sizeIndex)]]);
    tensors.push_back(interp::HostTensor::zeros(p.dtype, shape));
  }
  ASSERT_EQ(tensors.size(), 3u) << "the corpus kernels are C = A @ B";
  interp::HostTensor &a = tensors[0], &b = tensors[1], &out = tensors[2];
  for (int64_t r = 0; r < a.shape[0]; ++r) a.set(static_cast<size_t>(r * a.shape[1] + aK), 1.0);
  for (int64_t n = 0; n < b.shape[1]; ++n) b.set(static_cast<size_t>(bK * b.shape[1] + n), 1.0);
  ASSERT_LT(row, out.shape[0]);
  ASSERT_LT(col, out.shape[1]);
  std::vector<interp::ArgValue> args{a, b, out};
  interp::RunOptions options;
  options.maxOpsPerBlock = 50'000'000;
  auto error = interp::run(fn, args, options);
  ASSERT_FALSE(error) << path.filename() << ": " << error->message;
  double got = out.get(static_cast<size_t>(row * out.shape[1] + col));
  EXPECT_GE(got, 1.0) << path.filename() << ": C[" << row << ", " << col << "] = " << got
                      << ", so no product paired A's column " << aK << " with B's row " << bK;
}

std::vector<fs::path> dotFiles() {
  std::vector<fs::path> out;
  for (const fs::path& p : corpusFiles()) {
    std::string text = readFile(p);
    if (text.find(" AG2035:") == std::string::npos) continue;
    bool other = false;
    for (const Expectation& e : parseExpectations(text)) other = other || (e.code != "AG2035" && e.severity == "error");
    if (!other) out.push_back(p);
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Corpus, DotReplay, ::testing::ValuesIn(dotFiles()), caseName);

}  // namespace
}  // namespace argus::corpus

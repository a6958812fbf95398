// What the rewrite tests share: the naive GEMM, a clean compile, the chain of
// rewrites to the shape of examples/gemm_tc.ag, and running a GEMM on the CPU
// interpreter.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "agent/rewrite.h"
#include "checker_only.h"
#include "driver/compilation.h"
#include "hopper_test_util.h"
#include "runtime/interp/interpreter.h"
#include "test_sources.h"

namespace argus::testing::agent_rewrite {

using argus::agent::rewrite;
using argus::agent::RewriteResult;
using argus::interp::ArgValue;
using argus::interp::HostTensor;
using nlohmann::json;
using argus::testing::hopper::randomBf16;

inline std::string naiveSource() { return argus::testing::readExample("agent/gemm_naive.ag"); }

// Compiles to PTX; fails the test on any diagnostic (errors and warnings alike).
inline std::unique_ptr<argus::Compilation> compileClean(const std::string& source, const std::string& what,
                                                 std::vector<std::pair<std::string, std::string>> defines = {},
                                                 const std::string& arch = "sm_90") {
  argus::CompileOptions options;
  options.defines = std::move(defines);
  options.arch = arch;
  auto c = std::make_unique<argus::Compilation>(argus::SourceFile(what + ".ag", source), options);
  EXPECT_FALSE(c->ptx().empty()) << what << "\n" << source;
  EXPECT_FALSE(c->hasErrors()) << what;
  // Clean: no error and no warning (performance notes such as AG5022 may remain), except
  // the documented "cannot prove" of a grouped tile order.
  for (const argus::Diagnostic& d : c->diagnostics())
    if (d.severity != argus::Severity::Note && !argus::testing::isTileOrderSeparationLimit(d))
      ADD_FAILURE() << what << ": " << d.code() << " " << d.message;
  return c;
}

inline RewriteResult apply(const std::string& id, const std::string& source, const json& args) {
  RewriteResult r = rewrite(id, source, args);
  EXPECT_TRUE(r.applied) << id << " " << args.dump() << ": " << r.whyNot;
  EXPECT_TRUE(r.whyNot.empty());
  EXPECT_FALSE(r.description.empty());
  return r;
}

inline void expectWhyNot(const std::string& id, const std::string& source, const json& args, const std::string& contains) {
  RewriteResult r = rewrite(id, source, args);
  EXPECT_FALSE(r.applied) << id << " " << args.dump() << " applied: " << r.description;
  EXPECT_NE(r.whyNot.find(contains), std::string::npos) << id << ": whyNot is '" << r.whyNot << "'";
}

inline bool contains(const std::string& text, const std::string& piece) { return text.find(piece) != std::string::npos; }

// The chain that turns the naive GEMM into the shape of examples/gemm_tc.ag.
struct ChainStep {
  const char* id;
  const char* args;
};
inline const ChainStep kChain[] = {
    {"stage_operands_in_shared", "{}"},
    {"tensor_core_mma", R"({"WM": 2, "WN": 2})"},
    {"async_pipeline", R"({"stages": 3})"},
    {"set_params", R"({"BM": 128, "BN": 128, "BK": 32})"},
    {"swizzle_shared", R"("auto")"},
    {"set_stages", R"({"stages": 4})"},
    {"rasterize_grid", R"({"GROUP_M": 8})"},
};

inline std::string runChain(std::vector<std::string>* steps = nullptr) {
  std::string source = naiveSource();
  for (const ChainStep& step : kChain) {
    RewriteResult r = apply(step.id, source, json::parse(step.args));
    if (!r.applied) return "";
    source = r.source;
    if (steps) steps->push_back(source);
  }
  return source;
}


// Runs the only kernel of `c` on A (m x k) and B (k x n); returns C.
inline HostTensor runGemm(argus::Compilation& c, const HostTensor& a, const HostTensor& b, int64_t m, int64_t n) {
  HostTensor aCopy = a, bCopy = b;
  HostTensor out = HostTensor::zeros(argus::ir::DType::BF16, {m, n});
  for (size_t i = 0; i < out.size(); ++i) out.set(i, 1e30f);  // poisoned
  EXPECT_EQ(c.ir().functions.size(), 1u);
  if (c.ir().functions.size() != 1) return out;
  std::vector<ArgValue> args = {&aCopy, &bCopy, &out};
  auto error = argus::interp::run(*c.ir().functions[0], args);
  EXPECT_FALSE(error) << error->message;
  return out;
}

// ||got - want|| / ||want|| over all elements.
inline double relativeDifference(const HostTensor& want, const HostTensor& got) {
  double num = 0, den = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    num += (got.get(i) - want.get(i)) * (got.get(i) - want.get(i));
    den += want.get(i) * want.get(i);
  }
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

}  // namespace argus::testing::agent_rewrite

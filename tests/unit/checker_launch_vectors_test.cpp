// The shared launch-expression vectors (tests/data/launch_expr_vectors.json)
// against ir::LaunchExpr::evaluate and the checker's encoding of requirements
// (through ScalarEncoder, which calls encodeLaunchCondition/encodeLaunchInt of
// checker/scalar_semantics.h, the one launch encoding every checker analysis
// uses: the race and bounds encoders, the separation check, the tag flow): the same cases run against the GPU runtime's SizeExpr
// (runtime_gpu_launch_vectors_test.cpp) and the Python loader
// (python/argus/test_meta_vectors.py), so the evaluators cannot drift apart.
#include <gtest/gtest.h>
#include <z3++.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "checker/invariant_scalar.h"
#include "ir/ir.h"

namespace argus {
namespace {

using json = nlohmann::json;
using K = ir::LaunchExpr::Kind;

json loadCases() {
  std::ifstream in(std::string(ARGUS_SOURCE_DIR) + "/tests/data/launch_expr_vectors.json");
  EXPECT_TRUE(in) << "tests/data/launch_expr_vectors.json";
  json doc = json::parse(in);
  return doc.at("cases");
}

ir::LaunchExpr fromJson(const json& j, const std::vector<std::string>& sizeNames) {
  static const std::map<std::string, K> kinds = {
      {"add", K::Add}, {"sub", K::Sub}, {"mul", K::Mul}, {"floordiv", K::FloorDiv}, {"cdiv", K::CeilDiv},
      {"mod", K::Mod}, {"min", K::Min}, {"max", K::Max}, {"lt", K::Lt},           {"le", K::Le},
      {"gt", K::Gt},   {"ge", K::Ge},   {"eq", K::Eq},   {"ne", K::Ne},             {"and", K::And},
      {"or", K::Or},   {"not", K::Not}};
  ir::LaunchExpr e;
  if (j.contains("const")) {
    e.kind = K::Const;
    e.value = j.at("const").get<int64_t>();
  } else if (j.contains("size")) {
    e.kind = K::Size;
    auto it = std::find(sizeNames.begin(), sizeNames.end(), j.at("size").get<std::string>());
    e.value = it - sizeNames.begin();
  } else {
    e.kind = kinds.at(j.at("op").get<std::string>());
    for (const json& a : j.at("args")) e.operands.push_back(fromJson(a, sizeNames));
  }
  return e;
}

bool isCondition(const ir::LaunchExpr& e) {
  switch (e.kind) {
    case K::Lt: case K::Le: case K::Gt: case K::Ge: case K::Eq: case K::Ne: case K::And: case K::Or: case K::Not:
      return true;
    default:
      return false;
  }
}

struct Case {
  std::string name;
  std::vector<std::string> sizeNames;
  std::vector<int64_t> sizes;
  ir::LaunchExpr expr;
  bool error = false;
  int64_t value = 0;
};

std::vector<Case> cases() {
  std::vector<Case> out;
  for (const json& c : loadCases()) {
    Case k;
    k.name = c.at("name").get<std::string>();
    for (const auto& [name, v] : c.at("sizes").items()) {
      k.sizeNames.push_back(name);
      k.sizes.push_back(v.get<int64_t>());
    }
    k.expr = fromJson(c.at("expr"), k.sizeNames);
    k.error = c.value("error", false);
    if (!k.error) k.value = c.at("value").get<int64_t>();
    out.push_back(std::move(k));
  }
  return out;
}

TEST(LaunchExpressionVectors, IrEvaluatorAgrees) {
  std::vector<Case> all = cases();
  ASSERT_GT(all.size(), 20u);
  for (const Case& c : all) {
    int64_t out = 0;
    std::string error;
    bool ok = c.expr.evaluate(c.sizes, out, &error);
    if (c.error) {
      EXPECT_FALSE(ok) << c.name;
    } else {
      EXPECT_TRUE(ok) << c.name << ": " << error;
      EXPECT_EQ(out, c.value) << c.name;
    }
  }
}

// The checker reads a launch expression through the requirements it assumes:
// `expr == value` (a condition: `expr`, or `not expr` for 0) must hold at the
// case's sizes, and its negation must not, so a requirement the encoder drops
// fails here too. A division by zero fails the launch on the host, so the
// checker never meets one; those cases are the other evaluators' only.
TEST(LaunchExpressionVectors, CheckerEncodingAgrees) {
  for (const Case& c : cases()) {
    if (c.error) continue;
    for (bool negated : {false, true}) {
      ir::Function fn;
      fn.sizeNames = c.sizeNames;
      ir::LaunchExpr holds;
      if (isCondition(c.expr)) {
        holds = c.expr;
        if ((c.value == 0) != negated) {
          ir::LaunchExpr wrapped;
          wrapped.kind = K::Not;
          wrapped.operands.push_back(holds);
          holds = wrapped;
        }
      } else {
        ir::LaunchExpr constant;
        constant.kind = K::Const;
        constant.value = c.value;
        holds.kind = negated ? K::Ne : K::Eq;
        holds.operands = {c.expr, constant};
      }
      fn.requirements.push_back(ir::Requirement{holds, c.name, {}, false});
      z3::context ctx;
      checker::ScalarScope scope;
      checker::ScalarEncoder enc(ctx, fn, scope);
      z3::solver solver(ctx, "QF_BV");
      for (const z3::expr& e : enc.constraints()) solver.add(e);
      ASSERT_FALSE(enc.constraints().empty()) << c.name << ": the checker dropped the requirement";
      for (size_t i = 0; i < c.sizes.size(); ++i) solver.add(enc.size(static_cast<int>(i)) == ctx.bv_val(c.sizes[i], 32));
      EXPECT_EQ(solver.check(), negated ? z3::unsat : z3::sat)
          << c.name << (negated ? ": the checker also admits another value" : ": the checker computes another value");
    }
  }
}

}  // namespace
}  // namespace argus

// The shared launch-expression vectors (tests/data/launch_expr_vectors.json)
// through the GPU runtime: each case's expression is read by the metadata
// parser as a grid extent, then evaluated by SizeExpr, as a launch does. The
// same cases run against ir::LaunchExpr::evaluate and the checker
// (checker_launch_vectors_test.cpp) and the Python loader
// (python/argus/test_meta_vectors.py).
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "runtime/gpu/launch_metadata.h"

namespace argus::gpu {
namespace {

using json = nlohmann::json;

TEST(LaunchExpressionVectors, GpuRuntimeAgrees) {
  std::ifstream in(std::string(ARGUS_SOURCE_DIR) + "/tests/data/launch_expr_vectors.json");
  ASSERT_TRUE(in);
  const json cases = json::parse(in).at("cases");
  ASSERT_GT(cases.size(), 20u);
  for (const json& c : cases) {
    const std::string name = c.at("name").get<std::string>();
    json sizes = json::array(), params = json::array();
    std::map<std::string, int64_t> values;
    for (const auto& [size, v] : c.at("sizes").items()) {
      sizes.push_back(size);
      params.push_back(json{{"name", size}, {"kind", "size"}, {"dtype", "i32"}});
      values[size] = v.get<int64_t>();
    }
    json kernel = {{"name", "k"},           {"warps", 1},
                   {"threads", 32},         {"params", params},
                   {"sizes", sizes},        {"grid", json::array({c.at("expr"), json{{"const", 1}}, json{{"const", 1}}})},
                   {"grid_text", json::array({name, "1", "1"})}, {"requirements", json::array()},
                   {"static_shared_bytes", 0}};
    json doc = {{"version", 1}, {"kernels", json::array({kernel})}};
    std::vector<KernelMeta> kernels;
    std::string error;
    ASSERT_TRUE(parseKernelMetadata(doc.dump(), kernels, error)) << name << ": " << error;
    ASSERT_EQ(kernels.size(), 1u);
    int64_t out = 0;
    bool ok = kernels[0].grid[0].evaluate(values, out, error);
    if (c.value("error", false)) {
      EXPECT_FALSE(ok) << name;
    } else {
      EXPECT_TRUE(ok) << name << ": " << error;
      EXPECT_EQ(out, c.at("value").get<int64_t>()) << name;
    }
  }
}

}  // namespace
}  // namespace argus::gpu

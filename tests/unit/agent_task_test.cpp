// Task files (agent/task.h): loading, errors that name the field, FLOP counts.
#include <gtest/gtest.h>

#include "agent/task.h"
#include "tests/unit/agent_eval_test_util.h"

namespace argus::agent {
namespace {

using argus::testing::ScratchDir;

std::string loadError(const ScratchDir& dir, const std::string& json) {
  dir.write("kernel.ag", "# a kernel\n");
  std::string error;
  std::optional<Task> task = loadTask(dir.write("t.task.json", json), error);
  EXPECT_FALSE(task) << "loaded: " << json;
  return error;
}

TEST(AgentTask, LoadsAGoodTaskFile) {
  ScratchDir dir;
  std::string path = argus::testing::writeSmallTask(dir, "# the kernel\n",
                                                    R"(, "budget": {"candidates": 12}, "peer": {"name": "cuBLAS", "tflops": 788}, "arch": "sm_80")");
  std::string error;
  std::optional<Task> task = loadTask(path, error);
  ASSERT_TRUE(task) << error;
  EXPECT_EQ(task->name, "small");
  EXPECT_EQ(task->kernelSource, "# the kernel\n");
  EXPECT_EQ(task->kernelPath, (dir.path() / "kernel.ag").string());
  ASSERT_EQ(task->validate.size(), 2u);
  EXPECT_EQ(task->validate[1].at("N"), 70);
  EXPECT_EQ(task->measure.at("K"), 4096);
  EXPECT_EQ(task->flopsExpr, "2*M*N*K");
  EXPECT_EQ(task->candidateBudget, 12);
  EXPECT_EQ(task->peerName, "cuBLAS");
  EXPECT_EQ(task->peerTflops, 788);
  EXPECT_EQ(task->arch, "sm_80");
}

TEST(AgentTask, DefaultsAndNameFromTheFile) {
  ScratchDir dir;
  dir.write("k.ag", "x\n");
  std::string error;
  std::optional<Task> task = loadTask(
      dir.write("gemm_x.task.json", R"({"kernel": "k.ag", "validate": [{"N": 4}], "measure": {"N": 8}})"), error);
  ASSERT_TRUE(task) << error;
  EXPECT_EQ(task->name, "gemm_x");
  EXPECT_EQ(task->candidateBudget, 40);
  EXPECT_EQ(task->arch, "sm_90");
  EXPECT_FALSE(task->peerTflops);
  EXPECT_FALSE(taskFlops(*task, task->measure));
}

TEST(AgentTask, ErrorsNameTheField) {
  ScratchDir dir;
  const std::string good = R"("kernel": "kernel.ag", "validate": [{"M": 4}], "measure": {"M": 8})";
  EXPECT_NE(loadError(dir, R"({"validate": [{"M": 4}], "measure": {"M": 8}})").find("missing field 'kernel'"),
            std::string::npos);
  EXPECT_NE(loadError(dir, R"({"kernel": "kernel.ag", "validate": [{"M": 4}, {"M": "x"}], "measure": {"M": 8}})")
                .find("field 'validate[1].M': expected a positive integer"),
            std::string::npos);
  EXPECT_NE(loadError(dir, R"({"kernel": "kernel.ag", "validate": [], "measure": {"M": 8}})")
                .find("field 'validate': expected a non-empty array"),
            std::string::npos);
  EXPECT_NE(loadError(dir, R"({"kernel": "kernel.ag", "validate": [{"M": 4}], "measure": {"M": 0}})")
                .find("field 'measure.M'"),
            std::string::npos);
  EXPECT_NE(loadError(dir, R"({"kernel": "kernel.ag", "validate": [{"M": 4}], "measure": {"N": 8}})")
                .find("every shape needs the same sizes"),
            std::string::npos);
  EXPECT_NE(loadError(dir, "{" + good + R"(, "budjet": 3})").find("unknown field 'budjet'"), std::string::npos);
  EXPECT_NE(loadError(dir, "{" + good + R"(, "budget": {"candidates": -1}})").find("field 'budget.candidates'"),
            std::string::npos);
  EXPECT_NE(loadError(dir, "{" + good + R"(, "peer": {"tflops": "fast"}})").find("field 'peer.tflops'"),
            std::string::npos);
  EXPECT_NE(loadError(dir, "{" + good + R"(, "flops": "2*M*Q"})").find("field 'flops': '2*M*Q': unknown size 'Q'"),
            std::string::npos);
  EXPECT_NE(loadError(dir, "{" + good + R"(, "arch": "sm_70"})").find("field 'arch'"), std::string::npos);
  EXPECT_NE(loadError(dir, R"({"kernel": "nope.ag", "validate": [{"M": 4}], "measure": {"M": 8}})")
                .find("field 'kernel': cannot read"),
            std::string::npos);
  EXPECT_NE(loadError(dir, "[1, 2]").find("expected a JSON object"), std::string::npos);
  std::string invalid = loadError(dir, "{\"kernel\": ");
  EXPECT_NE(invalid.find("t.task.json: "), std::string::npos) << invalid;
  EXPECT_NE(invalid.find("parse error"), std::string::npos) << invalid;
  std::string error;
  EXPECT_FALSE(loadTask((dir.path() / "missing.task.json").string(), error));
  EXPECT_NE(error.find("cannot read the task file"), std::string::npos);
}

TEST(AgentTask, MultipleOfIsAPromiseEveryShapeKeeps) {
  ScratchDir dir;
  dir.write("kernel.ag", "# a kernel\n");
  std::string error;
  std::optional<Task> task = loadTask(
      dir.write("m.task.json",
                R"({"kernel": "kernel.ag", "validate": [{"M": 97, "K": 72}], "measure": {"M": 4096, "K": 4096},
                    "multiple_of": {"K": 8}})"),
      error);
  ASSERT_TRUE(task) << error;
  EXPECT_EQ(task->multipleOf.at("K"), 8);
  const std::string base = R"("kernel": "kernel.ag", "measure": {"M": 64, "K": 64})";
  EXPECT_NE(loadError(dir, "{" + base + R"(, "validate": [{"M": 3, "K": 71}], "multiple_of": {"K": 8}})")
                .find("field 'validate[0]': K = 71 is not a multiple of 8, which 'multiple_of' promises"),
            std::string::npos);
  EXPECT_NE(loadError(dir, "{" + base + R"(, "validate": [{"M": 3, "K": 8}], "multiple_of": {"Q": 8}})")
                .find("'Q' is not a size of 'measure'"),
            std::string::npos);
  EXPECT_NE(loadError(dir, "{" + base + R"(, "validate": [{"M": 3, "K": 8}], "multiple_of": {"K": 0}})")
                .find("field 'multiple_of.K'"),
            std::string::npos);
}

TEST(AgentTask, FlopsExpression) {
  Task task;
  Sizes sizes{{"M", 4096}, {"N", 2048}, {"K", 100}};
  task.flopsExpr = "2*M*N*K";
  EXPECT_DOUBLE_EQ(*taskFlops(task, sizes), 2.0 * 4096 * 2048 * 100);
  task.flopsExpr = " (M + 2) / 4 - -3 * (K - 1)";
  EXPECT_DOUBLE_EQ(*taskFlops(task, sizes), (4096.0 + 2) / 4 + 3 * 99);
  task.flopsExpr = "N/0";
  EXPECT_FALSE(taskFlops(task, sizes));
  for (const char* bad : {"2*", "2*(M", "M N", "2 ^ M", "X"}) {
    task.flopsExpr = bad;
    EXPECT_FALSE(taskFlops(task, sizes)) << bad;
  }
}

TEST(AgentTask, ExampleTasksLoad) {
  for (const char* name : {"gemm_4096", "gemm_2048x8192", "gemm_small", "gemm_nt_4096"}) {
    std::string error;
    std::optional<Task> task =
        loadTask(std::string(ARGUS_SOURCE_DIR) + "/examples/agent/" + name + ".task.json", error);
    ASSERT_TRUE(task) << error;
    EXPECT_EQ(task->name, name);
    EXPECT_NE(task->kernelSource.find("def gemm_naive"), std::string::npos);
    EXPECT_GT(*taskFlops(*task, task->measure), 0);
  }
  // The Hopper tasks: TMA's 16-byte rows promised for K and N.
  std::string error;
  std::optional<Task> hopper = loadTask(std::string(ARGUS_SOURCE_DIR) + "/examples/agent/gemm_4096.task.json", error);
  ASSERT_TRUE(hopper) << error;
  EXPECT_EQ(hopper->arch, "sm_90a");
  EXPECT_EQ(hopper->multipleOf, (Sizes{{"K", 8}, {"N", 8}}));
}

}  // namespace
}  // namespace argus::agent

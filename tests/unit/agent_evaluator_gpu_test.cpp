// The Evaluator's GPU path without a GPU: a stand-in GpuMeasurer runs the
// kernel whose PTX it is given in the CPU interpreter (the test compiles the
// same sources, so it knows which PTX is which), and can be told to return a
// wrong result at the measured shape only, as GPU code that breaks at large
// sizes would. The measured-shape check against the task kernel's GPU result
// must catch it.
#include <gtest/gtest.h>

#include <map>

#include "agent/evaluator.h"
#include "agent/evaluator_internal.h"
#include "driver/compilation.h"
#include "tests/unit/agent_eval_test_util.h"

namespace argus::agent {
namespace {

using argus::testing::naiveGemm;
using argus::testing::replaced;
using argus::testing::ScratchDir;

class InterpreterGpu : public detail::GpuMeasurer {
 public:
  // Kernels by their PTX; `corruptAt`: the shape at which the PTX `corrupted` returns a wrong C.
  std::map<std::string, const ir::Function*> kernels;
  std::string corrupted;
  Sizes corruptAt;
  std::vector<Sizes> runs;  // every shape run, in order

  std::string deviceName() const override { return "interpreter stand-in"; }
  std::string deviceArch() const override { return "sm_90"; }
  bool runOnce(const std::string& ptx, const std::string&, const std::string&, const Sizes& sizes,
               const detail::KernelArguments& args, const std::vector<detail::TensorUse>& uses,
               std::vector<interp::HostTensor>& results, std::string& error) override {
    auto it = kernels.find(ptx);
    if (it == kernels.end()) {
      error = "unknown PTX";
      return false;
    }
    runs.push_back(sizes);
    detail::KernelArguments copy = args;
    for (size_t t = 0; t < copy.tensors.size(); ++t)
      if (uses[t] == detail::TensorUse::WriteOnly) detail::poison(copy.tensors[t]);
    std::vector<interp::ArgValue> values = copy.interpreterValues(*it->second);
    if (auto fault = interp::run(*it->second, values)) {
      error = fault->message;
      return false;
    }
    if (ptx == corrupted && sizes == corruptAt) copy.tensors.back().set(copy.tensors.back().size() - 1, 1e3);
    results = copy.tensors;
    return true;
  }
  bool time(const std::string&, const std::string&, const std::string&, const Sizes&, const detail::KernelArguments&,
            const std::vector<detail::TensorUse>&, int, int, double& medianMs, std::string&) override {
    medianMs = 0.25;
    return true;
  }
};

struct Compiled {
  std::unique_ptr<Compilation> compilation;
  const ir::Function* fn = nullptr;
  std::string ptx;
};

Compiled compile(const Task& task, const std::string& source) {
  Compiled c;
  CompileOptions options;
  options.arch = task.arch;
  c.compilation = std::make_unique<Compilation>(SourceFile(task.kernelPath, source), options);
  c.ptx = c.compilation->ptx();
  c.fn = c.compilation->ir().functions.front().get();
  return c;
}

TEST(AgentEvaluatorGpu, TheMeasuredShapeIsCheckedAgainstTheTaskKernelOnTheGpu) {
  ScratchDir dir;
  std::string error;
  std::optional<Task> loaded = loadTask(argus::testing::writeSmallTask(dir, naiveGemm()), error);
  ASSERT_TRUE(loaded) << error;
  Task task = *loaded;
  task.measure = {{"M", 96}, {"N", 80}, {"K", 48}};  // small enough for the stand-in to run
  const std::string candidate = replaced(naiveGemm(), "BN: const = 64", "BN: const = 32");
  Compiled reference = compile(task, task.kernelSource), faster = compile(task, candidate);
  ASSERT_FALSE(reference.ptx.empty());
  ASSERT_FALSE(faster.ptx.empty());

  auto gpu = std::make_shared<InterpreterGpu>();
  gpu->kernels = {{reference.ptx, reference.fn}, {faster.ptx, faster.fn}};
  EvaluatorOptions options;
  options.seed = 3;
  options.gpuForTesting = [gpu] {
    // The Evaluator owns what it gets: hand it a forwarding wrapper.
    struct Forward : detail::GpuMeasurer {
      std::shared_ptr<InterpreterGpu> to;
      std::string deviceName() const override { return to->deviceName(); }
      std::string deviceArch() const override { return to->deviceArch(); }
      bool runOnce(const std::string& a, const std::string& b, const std::string& c, const Sizes& d,
                   const detail::KernelArguments& e, const std::vector<detail::TensorUse>& f,
                   std::vector<interp::HostTensor>& g, std::string& h) override {
        return to->runOnce(a, b, c, d, e, f, g, h);
      }
      bool time(const std::string& a, const std::string& b, const std::string& c, const Sizes& d,
                const detail::KernelArguments& e, const std::vector<detail::TensorUse>& f, int g, int h, double& i,
                std::string& j) override {
        return to->time(a, b, c, d, e, f, g, h, i, j);
      }
    };
    auto forward = std::make_unique<Forward>();
    forward->to = gpu;
    return std::unique_ptr<detail::GpuMeasurer>(std::move(forward));
  };
  Evaluator evaluator(task, options);
  ASSERT_TRUE(evaluator.hasGpu());
  Candidate c;
  c.source = candidate;
  Evaluation ok = evaluator.evaluate(c);
  ASSERT_EQ(ok.verdict, Verdict::Ok) << ok.detail;
  EXPECT_EQ(ok.timeSource, "gpu");
  EXPECT_DOUBLE_EQ(*ok.timeMs, 0.25);
  bool checkedAtMeasure = false;
  for (const auto& shape : ok.evidence["shapes"])
    checkedAtMeasure |= shape["engine"] == "gpu" && shape["role"] == "measure" && shape["sizes"]["M"] == 96;
  EXPECT_TRUE(checkedAtMeasure) << ok.evidence.dump();
  EXPECT_NE(std::find(gpu->runs.begin(), gpu->runs.end(), task.measure), gpu->runs.end());

  // The same candidate, wrong on the GPU at the measured shape only.
  gpu->corrupted = faster.ptx;
  gpu->corruptAt = task.measure;
  Evaluation wrong = evaluator.evaluate(c);
  EXPECT_EQ(wrong.verdict, Verdict::Wrong) << wrong.detail;
  EXPECT_NE(wrong.detail.find("differs from the task's kernel on the GPU"), std::string::npos) << wrong.detail;
  EXPECT_NE(wrong.detail.find("at the measured shape K=48 M=96 N=80"), std::string::npos) << wrong.detail;
  EXPECT_EQ(wrong.evidence["failed_at"]["engine"], "gpu") << wrong.evidence.dump();
  EXPECT_FALSE(wrong.timeMs);
}

}  // namespace
}  // namespace argus::agent

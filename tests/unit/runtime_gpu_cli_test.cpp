// `argusc run` on a GPU and `argus-replay`, as a user runs them: the no-GPU
// path everywhere (the driver library is pointed at a missing file), the saved
// run's files, and the real thing where there is a GPU.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "runtime/gpu/gpu_runtime.h"
#include "runtime/gpu/launch_metadata.h"

namespace fs = std::filesystem;

namespace {

struct Result {
  int status = -1;
  std::string output;  // stdout and stderr together
};

Result run(const std::string& command) {
  Result r;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return r;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) r.output.append(buffer, n);
  int raw = pclose(pipe);
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  return r;
}

const std::string kNoDriver = "ARGUS_CUDA_DRIVER=/nonexistent/libcuda.so.1 ";
std::string argusc() { return std::string(ARGUS_BINARY_DIR) + "/argusc"; }
std::string replay() { return std::string(ARGUS_BINARY_DIR) + "/argus-replay"; }
std::string vadd() { return std::string(ARGUS_SOURCE_DIR) + "/examples/vadd.ag"; }

fs::path scratch(const std::string& name) {
  fs::path dir = fs::temp_directory_path() / ("argus_gpu_cli_" + std::to_string(getpid()));
  fs::create_directories(dir);
  return dir / name;
}

std::string readFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string noGpuReason() {
  std::string error;
  return argus::gpu::GpuRuntime::open(error) ? "" : error;
}

TEST(GpuCli, RunWithoutAGpuIsAnEnvironmentError) {
  Result r = run(kNoDriver + argusc() + " run " + vadd() + " --size N=100");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_EQ(r.output,
            "argusc run: no GPU: no NVIDIA driver: /nonexistent/libcuda.so.1 not found; "
            "pass --cpu to run on the CPU interpreter\n");
  // --cpu does not look for a GPU at all.
  Result cpu = run(kNoDriver + argusc() + " run --cpu " + vadd() + " --size N=100");
  EXPECT_EQ(cpu.status, 0) << cpu.output;
  EXPECT_NE(cpu.output.find("ran vadd on the CPU interpreter"), std::string::npos) << cpu.output;
}

TEST(GpuCli, UsageErrors) {
  Result saveWithoutCpu = run(argusc() + " run " + vadd() + " --size N=10 --save-io " + scratch("x").string());
  EXPECT_EQ(saveWithoutCpu.status, 2) << saveWithoutCpu.output;
  EXPECT_NE(saveWithoutCpu.output.find("--save-io works with --cpu"), std::string::npos) << saveWithoutCpu.output;
  EXPECT_EQ(run(argusc() + " run --cpu " + vadd() + " --size N=10 --repeat lots").status, 2);
  EXPECT_EQ(run(argusc() + " run --cpu " + vadd() + " --size N=10 --rtol -1").status, 2);
  Result noDir = run(replay());
  EXPECT_EQ(noDir.status, 2) << noDir.output;
  EXPECT_NE(noDir.output.find("no directory"), std::string::npos) << noDir.output;
  Result missing = run(replay() + " " + scratch("nothing-here").string());
  EXPECT_EQ(missing.status, 2) << missing.output;
  EXPECT_NE(missing.output.find("run.json"), std::string::npos) << missing.output;
  EXPECT_EQ(run(replay() + " --help").status, 0);
}

TEST(GpuCli, SaveIoWritesAReplayableRun) {
  fs::path dir = scratch("vadd_io");
  fs::remove_all(dir);
  Result r = run(kNoDriver + argusc() + " run --cpu " + vadd() + " --size N=1000 --seed 7 --save-io " + dir.string());
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("argus-replay " + dir.string()), std::string::npos) << r.output;

  nlohmann::json manifest = nlohmann::json::parse(readFile(dir / "run.json"), nullptr, false);
  ASSERT_FALSE(manifest.is_discarded());
  EXPECT_EQ(manifest["kernel"], "vadd");
  EXPECT_EQ(manifest["arch"], "sm_90");
  EXPECT_EQ(manifest["seed"], 7);
  EXPECT_EQ(manifest["sizes"]["N"], 1000);
  ASSERT_EQ(manifest["tensors"].size(), 3u);
  EXPECT_EQ(manifest["tensors"][0]["role"], "input");
  EXPECT_EQ(manifest["tensors"][2]["role"], "output");
  EXPECT_EQ(manifest["tensors"][2]["shape"], nlohmann::json::array({1000}));

  std::string ptx = readFile(dir / "kernel.ptx");
  EXPECT_NE(ptx.find(".target sm_90"), std::string::npos);
  EXPECT_NE(ptx.find(".entry vadd"), std::string::npos);
  // The metadata argusc writes is what the runtime reads.
  std::vector<argus::gpu::KernelMeta> kernels;
  std::string error;
  ASSERT_TRUE(argus::gpu::parseKernelMetadata(readFile(dir / "kernel.meta.json"), kernels, error)) << error;
  argus::gpu::LaunchPlan plan;
  ASSERT_TRUE(argus::gpu::planLaunch(kernels.at(0), {{"N", 1000}}, plan, error)) << error;
  EXPECT_EQ(plan.grid.x, 1u);  // cdiv(1000, 1024)
  EXPECT_EQ(plan.block.x, 128u);

  // The expected output is the interpreter's x + y.
  std::string x = readFile(dir / "x.input.bin"), y = readFile(dir / "y.input.bin"),
              out = readFile(dir / "out.expected.bin");
  ASSERT_EQ(out.size(), 4000u);
  ASSERT_EQ(x.size(), 4000u);
  for (size_t i = 0; i < 1000; ++i) {
    float a, b, c;
    std::memcpy(&a, x.data() + 4 * i, 4);
    std::memcpy(&b, y.data() + 4 * i, 4);
    std::memcpy(&c, out.data() + 4 * i, 4);
    ASSERT_EQ(c, a + b) << i;
  }

  Result noGpu = run(kNoDriver + replay() + " " + dir.string());
  EXPECT_EQ(noGpu.status, 2) << noGpu.output;
  EXPECT_NE(noGpu.output.find("argus-replay: no GPU: no NVIDIA driver"), std::string::npos) << noGpu.output;
  fs::remove_all(dir);
}

TEST(GpuCli, RunsChecksAndTimesOnTheGpu) {
  if (std::string why = noGpuReason(); !why.empty()) GTEST_SKIP() << "no GPU: " << why;
  Result r = run(argusc() + " run " + vadd() + " --size N=3001 --repeat 5 --flops N");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("check out: ok"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("time: median"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("TFLOP/s"), std::string::npos) << r.output;
  fs::path dir = scratch("vadd_gpu");
  ASSERT_EQ(run(argusc() + " run --cpu " + vadd() + " --size N=3001 --save-io " + dir.string()).status, 0);
  Result replayed = run(replay() + " " + dir.string() + " --repeat 5");
  EXPECT_EQ(replayed.status, 0) << replayed.output;
  EXPECT_NE(replayed.output.find("check out: ok"), std::string::npos) << replayed.output;
  fs::remove_all(dir);
}

}  // namespace

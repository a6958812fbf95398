// The GPU paths end to end on the stand-in driver (runtime_gpu_fake_libcuda.cpp):
// what CI can check of `argusc run`, `argus-replay` and the harness without a GPU.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "runtime/gpu/benchmark.h"

namespace fs = std::filesystem;

namespace argus::gpu {
namespace {

constexpr const char* kVaddMeta = R"json({"version": 1, "kernels": [{
  "name": "vadd", "warps": 4, "threads": 128,
  "params": [{"name": "x", "kind": "tensor", "dtype": "f32", "dims": [{"size": "N"}]},
             {"name": "y", "kind": "tensor", "dtype": "f32", "dims": [{"size": "N"}]},
             {"name": "out", "kind": "tensor", "dtype": "f32", "dims": [{"size": "N"}]},
             {"name": "N", "kind": "size", "dtype": "i32"}],
  "sizes": ["N"],
  "grid": [{"op": "cdiv", "args": [{"size": "N"}, {"const": 1024}]}, {"const": 1}, {"const": 1}],
  "requirements": []}]})json";

std::vector<uint8_t> floats(const std::vector<float>& values) {
  std::vector<uint8_t> bytes(values.size() * 4);
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

std::unique_ptr<GpuRuntime> openFake() {
  std::string error;
  OpenOptions options;
  options.driverLibrary = ARGUS_FAKE_CUDA;
  std::unique_ptr<GpuRuntime> runtime = GpuRuntime::open(error, options);
  EXPECT_TRUE(runtime) << error;
  return runtime;
}

std::vector<BenchTensor> vaddTensors(size_t n) {
  std::vector<BenchTensor> tensors(3);
  const char* names[] = {"x", "y", "out"};
  for (size_t t = 0; t < 3; ++t) {
    tensors[t].name = names[t];
    tensors[t].dtype = *hostDTypeFromName("f32");
    tensors[t].shape = {static_cast<int64_t>(n)};
    tensors[t].role = t == 2 ? TensorRole::Output : TensorRole::Input;
    tensors[t].input.resize(n * 4);
  }
  std::vector<float> x(n), y(n), sum(n);
  for (size_t i = 0; i < n; ++i) {
    x[i] = static_cast<float>(i) * 0.25f;
    y[i] = 1.0f - static_cast<float>(i);
    sum[i] = x[i] + y[i];
  }
  std::memcpy(tensors[0].input.data(), x.data(), n * 4);
  std::memcpy(tensors[1].input.data(), y.data(), n * 4);
  tensors[0].expected = tensors[0].input;
  tensors[1].expected = tensors[1].input;
  tensors[2].expected.resize(n * 4);
  std::memcpy(tensors[2].expected.data(), sum.data(), n * 4);
  return tensors;
}

KernelMeta vaddMeta() {
  std::vector<KernelMeta> kernels;
  std::string error;
  EXPECT_TRUE(parseKernelMetadata(kVaddMeta, kernels, error)) << error;
  return kernels.at(0);
}

TEST(FakeDriver, OpensAndDescribesTheDevice) {
  std::unique_ptr<GpuRuntime> runtime = openFake();
  ASSERT_TRUE(runtime);
  EXPECT_EQ(runtime->device().name, "Argus Fake GPU");
  EXPECT_EQ(runtime->device().argusArch(), "sm_90a");
  std::string error;
  EXPECT_FALSE(runtime->loadModule("FAKE_JIT_ERROR", error));
  EXPECT_EQ(error,
            "the driver could not compile the PTX: CUDA_ERROR_INVALID_PTX (fake driver error)\n"
            "ptxas fake, line 1; error: FAKE_JIT_ERROR");
  EXPECT_FALSE(runtime->loadModule("", error));
  std::shared_ptr<GpuModule> module = runtime->loadModule(".entry vadd(", error);
  ASSERT_TRUE(module) << error;
  EXPECT_FALSE(module->kernel("other", error));
  EXPECT_EQ(error, "the module has no kernel 'other': CUDA_ERROR_NOT_FOUND (fake driver error)");
}

TEST(FakeDriver, ChecksThenTimes) {
  std::unique_ptr<GpuRuntime> runtime = openFake();
  ASSERT_TRUE(runtime);
  std::vector<BenchTensor> tensors = vaddTensors(3001);
  BenchOptions options;
  options.repeat = 7;
  options.warmup = 2;
  options.flops = 3001;
  BenchOutcome outcome = benchmarkKernel(*runtime, ".entry vadd(", vaddMeta(), {{"N", 3001}}, tensors, {}, options);
  EXPECT_TRUE(outcome.ok) << outcome.error << outcome.report;
  EXPECT_NE(outcome.report.find("kernel vadd: grid (3, 1, 1), 128 threads per block"), std::string::npos)
      << outcome.report;
  EXPECT_NE(outcome.report.find("check out: ok, relative error 0"), std::string::npos) << outcome.report;
  EXPECT_NE(outcome.report.find("timed 7 runs after 2 warm-up runs"), std::string::npos) << outcome.report;
  EXPECT_NE(outcome.report.find("(7 runs)"), std::string::npos) << outcome.report;
  EXPECT_NE(outcome.report.find("TFLOP/s"), std::string::npos) << outcome.report;
}

// The resource line counts the dynamic shared memory the launch passes (a
// kernel over 48 KiB has no static shared memory at all).
TEST(FakeDriver, ReportsDynamicSharedMemory) {
  std::unique_ptr<GpuRuntime> runtime = openFake();
  ASSERT_TRUE(runtime);
  std::vector<BenchTensor> tensors = vaddTensors(256);
  KernelMeta meta = vaddMeta();
  meta.dynamicSharedBytes = 65536;
  BenchOptions options;
  options.repeat = 2;
  options.warmup = 1;
  BenchOutcome outcome = benchmarkKernel(*runtime, ".entry vadd(", meta, {{"N", 256}}, tensors, {}, options);
  EXPECT_TRUE(outcome.ok) << outcome.error << outcome.report;
  EXPECT_NE(outcome.report.find("65536 bytes of shared memory per block (65536 dynamic)"), std::string::npos)
      << outcome.report;
}

TEST(FakeDriver, UnwrittenOutputsFailTheCheck) {
  std::unique_ptr<GpuRuntime> runtime = openFake();
  ASSERT_TRUE(runtime);
  std::vector<BenchTensor> tensors = vaddTensors(100);
  KernelMeta meta = vaddMeta();
  meta.name = "noop";  // the fake driver runs nothing for it
  BenchOutcome outcome = benchmarkKernel(*runtime, ".entry noop(", meta, {{"N", 100}}, tensors, {}, BenchOptions{});
  EXPECT_FALSE(outcome.ok);
  EXPECT_TRUE(outcome.mismatch);
  EXPECT_NE(outcome.report.find("check out: MISMATCH, relative error inf"), std::string::npos) << outcome.report;
  EXPECT_NE(outcome.report.find("100 elements still hold the poison pattern"), std::string::npos) << outcome.report;
  EXPECT_NE(outcome.report.find("not timing a wrong kernel"), std::string::npos) << outcome.report;
  // Without a reference the poison is still reported.
  BenchOptions noCheck;
  noCheck.check = false;
  noCheck.repeat = 1;
  outcome = benchmarkKernel(*runtime, ".entry noop(", meta, {{"N", 100}}, tensors, {}, noCheck);
  EXPECT_TRUE(outcome.ok) << outcome.error;
  EXPECT_NE(outcome.report.find("check out: skipped (no reference); 100 of 100 elements still hold the poison"),
            std::string::npos)
      << outcome.report;
}

TEST(FakeDriver, LaunchErrorsAreReported) {
  std::unique_ptr<GpuRuntime> runtime = openFake();
  ASSERT_TRUE(runtime);
  std::vector<BenchTensor> tensors = vaddTensors(100);
  KernelMeta meta = vaddMeta();
  meta.threads = 1024;
  meta.params[0].dims[0].constant = 5;  // x no longer has the data's shape
  BenchOutcome outcome = benchmarkKernel(*runtime, ".entry vadd(", meta, {{"N", 100}}, tensors, {}, BenchOptions{});
  EXPECT_FALSE(outcome.ok);
  EXPECT_EQ(outcome.error, "the data for tensor 'x' does not have the kernel's dtype and shape");
  outcome = benchmarkKernel(*runtime, ".entry vadd(", vaddMeta(), {{"N", 5000}}, tensors, {}, BenchOptions{});
  EXPECT_FALSE(outcome.ok);
  EXPECT_EQ(outcome.error, "the data for tensor 'x' does not have the kernel's dtype and shape");
}

TEST(FakeDriver, LaunchesFromMetadataText) {
  std::unique_ptr<GpuRuntime> runtime = openFake();
  ASSERT_TRUE(runtime);
  std::string error;
  EXPECT_FALSE(MetadataLauncher::create(*runtime, ".entry vadd(", kVaddMeta, "gemm", error));
  EXPECT_EQ(error, "the metadata has no kernel 'gemm'");
  std::unique_ptr<MetadataLauncher> launcher = MetadataLauncher::create(*runtime, ".entry vadd(", kVaddMeta, "vadd", error);
  ASSERT_TRUE(launcher) << error;
  const size_t n = 50;
  std::vector<float> x(n, 1.5f), y(n, 2.0f), out(n, 0.0f);
  auto xb = runtime->allocate(n * 4, error), yb = runtime->allocate(n * 4, error), ob = runtime->allocate(n * 4, error);
  ASSERT_TRUE(xb && yb && ob) << error;
  ASSERT_TRUE(xb->upload(x.data(), n * 4, error) && yb->upload(y.data(), n * 4, error)) << error;
  std::map<std::string, const DeviceBuffer*> tensors{{"x", xb.get()}, {"y", yb.get()}, {"out", ob.get()}};
  ASSERT_TRUE(launcher->launch({{"N", static_cast<int64_t>(n)}}, tensors, {}, error)) << error;
  ASSERT_TRUE(runtime->synchronize(error) && ob->download(out.data(), n * 4, error)) << error;
  EXPECT_EQ(out, std::vector<float>(n, 3.5f));
  // A buffer smaller than the sizes say is refused before anything runs.
  EXPECT_FALSE(launcher->launch({{"N", 51}}, tensors, {}, error));
  EXPECT_EQ(error, "the buffer for tensor 'x' holds 200 bytes; the tensor needs 204");
}

TEST(FakeDriver, InOutTensorsAreRestoredBeforeEveryRun) {
  std::unique_ptr<GpuRuntime> runtime = openFake();
  ASSERT_TRUE(runtime);
  std::vector<KernelMeta> kernels;
  std::string error;
  ASSERT_TRUE(parseKernelMetadata(R"({"version": 1, "kernels": [{"name": "double_in_place", "threads": 128,
      "params": [{"name": "x", "kind": "tensor", "dtype": "f32", "dims": [{"size": "N"}]},
                 {"name": "N", "kind": "size", "dtype": "i32"}],
      "sizes": ["N"], "grid": [{"const": 1}, {"const": 1}, {"const": 1}]}]})",
                                  kernels, error))
      << error;
  BenchTensor x;
  x.name = "x";
  x.dtype = *hostDTypeFromName("f32");
  x.shape = {4};
  x.role = TensorRole::InOut;
  x.input = floats({1, 2, 3, 4});
  std::vector<BenchTensor> tensors{x};
  std::shared_ptr<GpuModule> module = runtime->loadModule(".entry double_in_place(", error);
  ASSERT_TRUE(module) << error;
  std::shared_ptr<GpuKernel> kernel = module->kernel("double_in_place", error);
  ASSERT_TRUE(kernel) << error;
  std::unique_ptr<BenchRun> run = BenchRun::create(*runtime, kernel, kernels[0], {{"N", 4}}, tensors, {}, error);
  ASSERT_TRUE(run) << error;
  EXPECT_EQ(run->bytesMoved(), 32.0);  // read and written: twice
  std::vector<float> ms;
  ASSERT_TRUE(run->time(2, 3, ms, error)) << error;
  EXPECT_EQ(ms.size(), 3u);
  std::vector<std::vector<uint8_t>> results;
  ASSERT_TRUE(run->runOnce(results, error)) << error;
  EXPECT_EQ(results.at(0), floats({2, 4, 6, 8}));  // not 2^6 times the input
}

struct Result {
  int status = -1;
  std::string output;
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

const std::string kFake = std::string("ARGUS_CUDA_DRIVER=") + ARGUS_FAKE_CUDA + " ";
std::string argusc() { return std::string(ARGUS_BINARY_DIR) + "/argusc"; }
std::string vadd() { return std::string(ARGUS_SOURCE_DIR) + "/examples/vadd.ag"; }

TEST(FakeDriverCli, ArguscRunChecksAgainstTheInterpreterAndTimes) {
  Result r = run(kFake + argusc() + " run " + vadd() + " --size N=3001 --seed 5 --repeat 3 --flops '2 * N'");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("device 0: Argus Fake GPU (compute capability 9.0); compiled vadd for sm_90a; seed 5"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("reference: the CPU interpreter on the same inputs"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("check out: ok, relative error 0"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("(3 runs)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("compute: "), std::string::npos) << r.output;

  Result ampere = run("ARGUS_FAKE_CUDA_CC=86 " + kFake + argusc() + " run " + vadd() + " --size N=10 --repeat 1");
  EXPECT_EQ(ampere.status, 0) << ampere.output;
  EXPECT_NE(ampere.output.find("compiled vadd for sm_80"), std::string::npos) << ampere.output;
  Result old = run("ARGUS_FAKE_CUDA_CC=75 " + kFake + argusc() + " run " + vadd() + " --size N=10");
  EXPECT_EQ(old.status, 2) << old.output;
  EXPECT_NE(old.output.find("compute capability 7.5; Argus targets 8.0 (sm_80) and newer"), std::string::npos)
      << old.output;
}

TEST(FakeDriverCli, TheSourcesArchLineMustBeOneTheDeviceRuns) {
  // An sm_90a kernel on an sm_80 device was compiled for sm_80 (and failed to compile);
  // now the run is refused up front, naming the line.
  fs::path dir = fs::temp_directory_path() / ("argus_fake_arch_" + std::to_string(getpid()));
  fs::create_directories(dir);
  fs::path kernel = dir / "hopper_vadd.ag";
  std::ifstream in(vadd());
  std::ofstream(kernel) << "# arch: sm_90a\n" << in.rdbuf();
  Result ampere = run("ARGUS_FAKE_CUDA_CC=86 " + kFake + argusc() + " run " + kernel.string() + " --size N=10");
  EXPECT_EQ(ampere.status, 2) << ampere.output;
  EXPECT_NE(ampere.output.find(kernel.string() + " says '# arch: sm_90a' but Argus Fake GPU (compute capability 8.6) "
                               "runs sm_80 code"),
            std::string::npos)
      << ampere.output;
  Result hopper = run(kFake + argusc() + " run " + kernel.string() + " --size N=10 --repeat 1");
  EXPECT_EQ(hopper.status, 0) << hopper.output;
  EXPECT_NE(hopper.output.find("compiled vadd for sm_90a"), std::string::npos) << hopper.output;
}

TEST(FakeDriverCli, SkippedChecksSaySo) {
  Result flag = run(kFake + argusc() + " run " + vadd() + " --size N=100 --no-check --repeat 1");
  EXPECT_EQ(flag.status, 0) << flag.output;
  EXPECT_NE(flag.output.find("check skipped (--no-check)"), std::string::npos) << flag.output;
  Result big = run(kFake + argusc() + " run " + vadd() + " --size N=1000000 --repeat 1");
  EXPECT_EQ(big.status, 0) << big.output;
  EXPECT_NE(big.output.find("check skipped: 3000000 elements in all tensors is above the interpreter's limit"),
            std::string::npos)
      << big.output;
  Result badFlops = run(kFake + argusc() + " run " + vadd() + " --size N=100 --flops 'N/2'");
  EXPECT_EQ(badFlops.status, 2) << badFlops.output;
  EXPECT_NE(badFlops.output.find("--flops: use '//' for integer division"), std::string::npos) << badFlops.output;
  Result unknownSize = run(kFake + argusc() + " run " + vadd() + " --size N=100 --flops '2*M'");
  EXPECT_EQ(unknownSize.status, 2) << unknownSize.output;
  EXPECT_NE(unknownSize.output.find("no value for size 'M'"), std::string::npos) << unknownSize.output;
}

TEST(FakeDriverCli, WrongResultsFailWithTheWorstElement) {
  // The fake driver runs only vadd: any other kernel leaves its output poisoned.
  fs::path dir = fs::temp_directory_path() / ("argus_fake_cli_" + std::to_string(getpid()));
  fs::create_directories(dir);
  fs::path kernel = dir / "scale.ag";
  std::ofstream(kernel) << "@kernel(grid=(cdiv(N, BLOCK),), warps=4)\n"
                           "def scale(x: Tensor[f32, (N,)], out: Tensor[f32, (N,)], s: f32, BLOCK: const = 128):\n"
                           "    i = program_id(0)\n"
                           "    out.tile((BLOCK,))[i] = load(x.tile((BLOCK,))[i]) * s\n";
  Result r = run(kFake + argusc() + " run " + kernel.string() + " --size N=300 --arg s=2");
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("check x: ok"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("check out: MISMATCH"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("worst out[0]: gpu nan"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("300 elements still hold the poison pattern"), std::string::npos) << r.output;

  // The same run saved and replayed: the saved scalar reaches the launch.
  fs::path io = dir / "io";
  ASSERT_EQ(run(argusc() + " run --cpu " + vadd() + " --size N=500 --save-io " + io.string()).status, 0);
  Result replayed = run(kFake + std::string(ARGUS_BINARY_DIR) + "/argus-replay " + io.string() + " --repeat 2");
  EXPECT_EQ(replayed.status, 0) << replayed.output;
  EXPECT_NE(replayed.output.find("check out: ok"), std::string::npos) << replayed.output;
  EXPECT_NE(replayed.output.find("(2 runs)"), std::string::npos) << replayed.output;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace argus::gpu

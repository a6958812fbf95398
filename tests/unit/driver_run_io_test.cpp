// `argusc run --cpu` with .npy inputs and outputs (--input, --output-dir), scalar
// defaults, and the source's '# arch:' line in --save-io, as a user runs them.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "runtime/interp/npy.h"

namespace fs = std::filesystem;
using argus::interp::HostTensor;

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

std::string argusc() { return std::string(ARGUS_BINARY_DIR) + "/argusc"; }
std::string example(const std::string& name) { return std::string(ARGUS_SOURCE_DIR) + "/examples/" + name; }

fs::path scratch(const std::string& name) {
  fs::path dir = fs::temp_directory_path() / ("argusc_run_io_" + std::to_string(getpid()));
  fs::create_directories(dir);
  return dir / name;
}

std::string readFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

fs::path writeFile(const fs::path& p, const std::string& bytes) {
  std::ofstream(p, std::ios::binary) << bytes;
  return p;
}

fs::path writeNpy(const std::string& name, argus::ir::DType dtype, std::vector<int64_t> shape, double first) {
  HostTensor t = HostTensor::zeros(dtype, std::move(shape));
  for (size_t i = 0; i < t.size(); ++i) t.set(i, first + static_cast<double>(i));
  return writeFile(scratch(name), argus::interp::tensorToNpy(t));
}

HostTensor readNpy(const fs::path& p) {
  argus::interp::NpyArray a;
  std::string error;
  HostTensor t;
  EXPECT_TRUE(argus::interp::parseNpy(readFile(p), a, error)) << p << ": " << error;
  EXPECT_TRUE(argus::interp::npyToTensor(a, argus::ir::DType::F32, t, error)) << p << ": " << error;
  return t;
}

// out = x * s, with s declared with a default.
const char* kScale =
    "@kernel(grid=(cdiv(N, BLOCK),), warps=4)\n"
    "def scale(x: Tensor[f32, (N,)], out: Tensor[f32, (N,)], s: f32 = 2.5, BLOCK: const = 128):\n"
    "    i = program_id(0)\n"
    "    out.tile((BLOCK,))[i] = load(x.tile((BLOCK,))[i]) * s\n";

TEST(RunIo, InputsGiveTheSizesAndOutputsAreWrittenAsNpy) {
  fs::path x = writeNpy("x.npy", argus::ir::DType::F32, {300}, 1.0);
  fs::path y = writeNpy("y.npy", argus::ir::DType::F32, {300}, 0.5);
  fs::path dir = scratch("out_vadd");
  fs::remove_all(dir);
  Result r = run(argusc() + " run --cpu " + example("vadd.ag") + " --input x=" + x.string() + " --input y=" +
                 y.string() + " --output-dir " + dir.string());
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("wrote " + (dir / "out.npy").string() + " (float32, shape (300,))"), std::string::npos)
      << r.output;
  EXPECT_FALSE(fs::exists(dir / "x.npy")) << "inputs the kernel only reads are not outputs";
  HostTensor out = readNpy(dir / "out.npy");
  ASSERT_EQ(out.shape, (std::vector<int64_t>{300}));
  for (size_t i = 0; i < out.size(); ++i) ASSERT_EQ(out.get(i), 1.5 + 2.0 * static_cast<double>(i)) << i;
}

TEST(RunIo, MismatchedFilesAreUsageErrorsThatSayWhy) {
  std::string vadd = argusc() + " run --cpu " + example("vadd.ag");
  fs::path x = writeNpy("x300.npy", argus::ir::DType::F32, {300}, 0);
  fs::path wide = writeNpy("x64.npy", argus::ir::DType::F64, {300}, 0);
  fs::path matrix = writeNpy("m.npy", argus::ir::DType::F32, {3, 100}, 0);
  fs::path y = writeNpy("y200.npy", argus::ir::DType::F32, {200}, 0);
  struct Case {
    std::string args, message;
  };
  for (const Case& c : std::vector<Case>{
           {" --input x=" + wide.string(),
            "argusc run: error: --input x: '" + wide.string() +
                "' holds float64 where the kernel's tensor is f32: save it with .astype(numpy.float32)\n"},
           {" --input x=" + matrix.string(),
            "argusc run: error: --input x: '" + matrix.string() +
                "' holds shape (3, 100) but 'x: Tensor[f32, (N,)]' has 1 dimension\n"},
           {" --input x=" + x.string() + " --input y=" + y.string(),
            "argusc run: error: --input y: '" + y.string() + "' holds shape (200,), so N=200 (dimension 0 of "
            "'y: Tensor[f32, (N,)]'), but --input x ('" + x.string() + "') says N=300\n"},
           {" --size N=10 --input x=" + x.string(),
            "argusc run: error: --input x: '" + x.string() + "' holds shape (300,), so N=300 (dimension 0 of "
            "'x: Tensor[f32, (N,)]'), but --size N=10 says N=10\n"},
           {" --input z=" + x.string(),
            "argusc run: error: --input z: kernel 'vadd' has no tensor parameter 'z' (its tensors: x, y, out)\n"},
           {" --input x=" + scratch("missing.npy").string(),
            "argusc run: error: --input x: cannot read '" + scratch("missing.npy").string() + "'\n"},
           {" --input x=" + example("vadd.ag"),
            "argusc run: error: --input x: '" + example("vadd.ag") +
                "' not a .npy file (it does not start with numpy's magic string; write it with numpy.save)\n"},
           {" --input x", "argusc run: error: --input needs NAME=FILE.npy\n"},
       }) {
    Result r = run(vadd + c.args);
    EXPECT_EQ(r.status, 2) << c.args << "\n" << r.output;
    EXPECT_EQ(r.output.substr(0, r.output.find("argusc: run")), c.message) << c.args;
  }
  Result gpuOutputs = run(argusc() + " run " + example("vadd.ag") + " --size N=4 --output-dir " + scratch("o").string());
  EXPECT_EQ(gpuOutputs.status, 2) << gpuOutputs.output;
  EXPECT_NE(gpuOutputs.output.find("--output-dir works with --cpu"), std::string::npos) << gpuOutputs.output;
}

TEST(RunIo, ScalarsTakeTheirDefaultOrMustBeGiven) {
  // layernorm's eps has no default: it was a random number (an eps of -0.18).
  Result missing = run(argusc() + " run --cpu " + example("layernorm.ag") + " --size M=2 --size N=10");
  EXPECT_EQ(missing.status, 2) << missing.output;
  EXPECT_NE(missing.output.find("kernel 'layernorm' needs --arg eps=VALUE: its scalar parameter 'eps: f32' has no "
                                "default (declare one as in 'eps: f32 = 1.0')"),
            std::string::npos)
      << missing.output;
  fs::path kernel = writeFile(scratch("scale.ag"), kScale);
  fs::path x = writeNpy("xs.npy", argus::ir::DType::F32, {200}, 1.0);
  fs::path dir = scratch("out_scale");
  Result byDefault = run(argusc() + " run --cpu " + kernel.string() + " --input x=" + x.string() + " --output-dir " +
                         dir.string());
  ASSERT_EQ(byDefault.status, 0) << byDefault.output;
  EXPECT_NE(byDefault.output.find("  s = 2.5 (its default)"), std::string::npos) << byDefault.output;
  EXPECT_EQ(readNpy(dir / "out.npy").get(3), 4.0 * 2.5);
  Result given = run(argusc() + " run --cpu " + kernel.string() + " --input x=" + x.string() + " --arg s=-1" +
                     " --output-dir " + dir.string());
  ASSERT_EQ(given.status, 0) << given.output;
  EXPECT_EQ(readNpy(dir / "out.npy").get(3), -4.0);
  Result unknown = run(argusc() + " run --cpu " + kernel.string() + " --size N=4 --arg eps=1");
  EXPECT_EQ(unknown.status, 2) << unknown.output;
  EXPECT_NE(unknown.output.find("--arg eps: kernel 'scale' has no scalar parameter 'eps'"), std::string::npos)
      << unknown.output;
  // The default is in the metadata for the Python launcher.
  fs::path ptx = scratch("scale.ptx");
  ASSERT_EQ(run(argusc() + " " + kernel.string() + " -o " + ptx.string()).status, 0);
  nlohmann::json meta = nlohmann::json::parse(readFile(scratch("scale.meta.json")));
  EXPECT_EQ(meta["kernels"][0]["params"][2]["default"], 2.5) << meta.dump();
}

TEST(RunIo, SaveIoCompilesForTheSourcesArchLine) {
  // '# arch: sm_90a' was ignored: the saved PTX was for sm_90.
  fs::path kernel = writeFile(scratch("hopper_vadd.ag"), "# arch: sm_90a\n" + readFile(example("vadd.ag")));
  fs::path dir = scratch("hopper_io");
  fs::remove_all(dir);
  Result r = run(argusc() + " run --cpu " + kernel.string() + " --size N=100 --save-io " + dir.string());
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("(PTX for sm_90a)"), std::string::npos) << r.output;
  EXPECT_EQ(nlohmann::json::parse(readFile(dir / "run.json"))["arch"], "sm_90a");
  EXPECT_NE(readFile(dir / "kernel.ptx").find(".target sm_90a"), std::string::npos);
  // --arch still wins.
  fs::remove_all(dir);
  ASSERT_EQ(run(argusc() + " run --cpu --arch=sm_80 " + kernel.string() + " --size N=100 --save-io " + dir.string()).status, 0);
  EXPECT_EQ(nlohmann::json::parse(readFile(dir / "run.json"))["arch"], "sm_80");
}

// The round trip a user does: numpy writes the inputs, argusc runs, numpy checks.
TEST(RunIo, NumpyRoundTrip) {
  if (run("python3 -c 'import numpy'").status != 0)
    GTEST_SKIP() << "python3 with numpy not found: the numpy round trip is skipped (the C++ writer and reader "
                    "are tested above)";
  fs::path dir = scratch("numpy_trip");
  fs::create_directories(dir);
  std::string script =
      "import numpy as np, subprocess, sys\n"
      "d = sys.argv[1]\n"
      "x = np.linspace(-3, 3, 1000, dtype=np.float32); y = np.arange(1000, dtype=np.float32)[::-1].copy()\n"
      "np.save(d + '/x.npy', x); np.save(d + '/y.npy', np.asfortranarray(y))\n"
      "subprocess.run([sys.argv[2], 'run', '--cpu', sys.argv[3], '--input', 'x=' + d + '/x.npy', '--input',\n"
      "                'y=' + d + '/y.npy', '--output-dir', d + '/out'], check=True, stdout=subprocess.DEVNULL)\n"
      "out = np.load(d + '/out/out.npy')\n"
      "assert out.dtype == np.float32 and out.shape == (1000,), (out.dtype, out.shape)\n"
      "assert np.array_equal(out, x + y), np.abs(out - (x + y)).max()\n"
      "print('numpy round trip ok')\n";
  writeFile(dir / "trip.py", script);
  Result r = run("python3 " + (dir / "trip.py").string() + " " + dir.string() + " " + argusc() + " " + example("vadd.ag"));
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("numpy round trip ok"), std::string::npos) << r.output;
}

}  // namespace

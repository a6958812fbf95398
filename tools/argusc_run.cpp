// `argusc run FILE.ag`: runs a kernel on random inputs or on .npy files (--input).
//   --cpu: on the CPU interpreter, printing a summary of every tensor afterwards
//          (--output-dir DIR writes the tensors it wrote as .npy files;
//          --save-io DIR also saves the PTX, the metadata, the inputs and the
//          interpreter's outputs for `argus-replay DIR` on a GPU machine).
//   else:  on the GPU (runtime/gpu): compiled for the device's architecture,
//          checked against the interpreter on the same inputs, then timed.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <iostream>
#include <map>
#include <random>
#include <set>
#include <sstream>

#include "driver/metadata.h"
#include "ir/ir.h"
#include "runtime/gpu/benchmark.h"
#include "runtime/gpu/gpu_runtime.h"
#include "runtime/gpu/launch_metadata.h"
#include "runtime/interp/interpreter.h"
#include "runtime/interp/npy.h"
#include "tools/cli_common.h"
#include "tools/run_io.h"

namespace argus::cli {
namespace {

// Above this many elements in all tensors together, a GPU run skips the
// comparison with the interpreter (which simulates every thread) unless --check.
constexpr size_t kInterpreterCheckLimit = size_t{1} << 20;

constexpr const char* kRunHelp = R"(usage: argusc run [--cpu] [options] FILE.ag [--size NAME=VALUE]... [--arg NAME=VALUE]...
                 [--input NAME=FILE.npy]... [--output-dir DIR]

Runs a kernel on random inputs, or on the .npy files given. Without --cpu: on the
GPU, compiled for the device (sm_80 for compute capability 8.x, sm_90a for 9.0,
sm_90 for newer; a source whose '# arch:' line names more than the device has is
refused), checked against the CPU interpreter on the same inputs, then timed
(docs/runtime.md).

options:
  --cpu                 run on the CPU interpreter instead
  --kernel NAME         the kernel to run (default: the only or first kernel)
  --size NAME=VALUE     a runtime size (every size name of the kernel needs one,
                        unless an --input's shape gives it)
  --arg NAME=VALUE      a scalar parameter's value (default: the one declared,
                        as in 'eps: f32 = 1e-5'; a scalar without one must be given)
  --input NAME=FILE     tensor NAME's values from a NumPy .npy file (its dtype must be
                        the tensor's; bf16 and f8 read float32 or their raw bits as
                        uint16/uint8); the others are random
  --output-dir DIR      with --cpu: write every tensor the kernel writes as DIR/NAME.npy
                        (bf16 and f8 as float32)
  --seed N              seed of the random inputs (default: 1 with --cpu, fresh on the GPU)
  --save-io DIR         with --cpu: save PTX (for the source's '# arch:' line, else sm_90,
                        or --arch), metadata, inputs and expected outputs for
                        `argus-replay DIR` on a GPU machine
GPU runs:
  --repeat N            timed runs (default 50; 0: check only)
  --warmup N            untimed runs first (default 10)
  --flops EXPR          operations per run, e.g. '2*M*N*K', for TFLOP/s
  --check / --no-check  force / skip the comparison with the interpreter (default:
                        compare when all tensors hold at most 2^20 elements)
  --rtol X              relative tolerance of the comparison (default: by dtype)
  --device N            the CUDA device (default 0)
Exit status: 0 ok, 1 errors in the program or wrong results, 2 bad usage or no GPU.
)";

int runUsage(const std::string& message) {
  std::cerr << "argusc run: error: " << message << "\n"
            << "argusc: run 'argusc --help' for usage\n";
  return 2;
}

bool parseAssignment(const std::string& text, std::string& name, std::string& value) {
  size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size()) return false;
  name = text.substr(0, eq);
  value = text.substr(eq + 1);
  return true;
}

bool parseCount(const std::string& text, int& out) {
  char* end = nullptr;
  long v = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || v < 0 || v > 1000000) return false;
  out = static_cast<int>(v);
  return true;
}

void fillRandom(interp::HostTensor& t, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> real(-1.0, 1.0);
  for (size_t i = 0; i < t.size(); ++i) {
    if (ir::isFloat(t.dtype)) t.set(i, real(rng));
    else if (t.dtype == ir::DType::Bool) t.set(i, static_cast<double>(rng() % 2));
    else t.setInt(i, static_cast<int64_t>(rng() % 16));
  }
}

std::string summarize(const interp::HostTensor& t) {
  double sum = 0, lo = INFINITY, hi = -INFINITY;
  size_t nans = 0;
  for (size_t i = 0; i < t.size(); ++i) {
    double v = t.get(i);
    if (std::isnan(v)) { ++nans; continue; }
    sum += v;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  std::ostringstream os;
  os << "sum=" << sum << " min=" << lo << " max=" << hi;
  if (nans) os << " nan=" << nans;
  os << " first=[";
  for (size_t i = 0; i < std::min<size_t>(4, t.size()); ++i) os << (i ? ", " : "") << t.get(i);
  os << (t.size() > 4 ? ", ...]" : "]");
  return os.str();
}

struct RunOptions {
  CommonOptions common;
  bool cpu = false;
  bool archGiven = false;
  std::string input, kernelName, saveIoDir, flopsText, outputDir;
  std::map<std::string, int64_t> sizes;
  std::map<std::string, std::string> scalarArgs;
  std::map<std::string, std::string> inputFiles;          // --input NAME=FILE
  std::map<std::string, interp::HostTensor> inputTensors;  // their contents, once read
  std::optional<uint64_t> seed;
  gpu::BenchOptions bench;
  std::optional<bool> check;  // --check / --no-check; unset: by size
  int device = 0;
};

// Parses the arguments; returns an exit status (2) on bad usage, -1 to go on.
int parseRunOptions(const std::vector<std::string>& args, RunOptions& o) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    std::string error, name, value;
    int consumed = parseCommonOption(args, i, o.common, error);
    if (consumed < 0) return runUsage(error);
    if (consumed > 0) {
      o.archGiven = o.archGiven || a.rfind("--arch", 0) == 0;
      i += static_cast<size_t>(consumed - 1);
      continue;
    }
    auto next = [&]() -> const std::string* { return i + 1 < args.size() ? &args[++i] : nullptr; };
    if (a == "-h" || a == "--help") { std::cout << kRunHelp; return 0; }
    if (a == "--cpu") { o.cpu = true; continue; }
    if (a == "--check") { o.check = true; continue; }
    if (a == "--no-check") { o.check = false; continue; }
    if (a == "--kernel" || a == "--save-io" || a == "--flops" || a == "--output-dir") {
      const std::string* v = next();
      if (!v) return runUsage(a + (a == "--kernel" ? " needs a name" : a == "--flops" ? " needs an expression such as '2*M*N*K'" : " needs a directory"));
      (a == "--kernel" ? o.kernelName : a == "--flops" ? o.flopsText : a == "--output-dir" ? o.outputDir : o.saveIoDir) = *v;
      continue;
    }
    if (a == "--repeat" || a == "--warmup" || a == "--device") {
      const std::string* v = next();
      int n = 0;
      if (!v || !parseCount(*v, n)) return runUsage(a + " needs a count (0 to 1000000)");
      (a == "--repeat" ? o.bench.repeat : a == "--warmup" ? o.bench.warmup : o.device) = n;
      continue;
    }
    if (a == "--rtol") {
      const std::string* v = next();
      char* end = nullptr;
      double tol = v ? std::strtod(v->c_str(), &end) : -1;
      if (!v || *end != '\0' || !(tol >= 0)) return runUsage("--rtol needs a non-negative number");
      o.bench.tolerance = tol;
      continue;
    }
    if (a == "--size" || a == "--arg" || a == "--input") {
      const std::string* v = next();
      if (!v || !parseAssignment(*v, name, value)) return runUsage(a + (a == "--input" ? " needs NAME=FILE.npy" : " needs NAME=VALUE"));
      if (a == "--arg") { o.scalarArgs[name] = value; continue; }
      if (a == "--input") { o.inputFiles[name] = value; continue; }
      char* end = nullptr;
      long long n = std::strtoll(value.c_str(), &end, 10);
      if (*end != '\0' || n < 0 || n > (1ll << 31) - 1)
        return runUsage("--size " + name + ": '" + value + "' is not a size (0 to 2^31-1)");
      o.sizes[name] = n;
      continue;
    }
    if (a == "--seed") {
      const std::string* v = next();
      if (!v) return runUsage("--seed needs a number");
      o.seed = std::strtoull(v->c_str(), nullptr, 10);
      continue;
    }
    if (!a.empty() && a[0] == '-') return runUsage("unknown option '" + a + "'");
    if (!o.input.empty()) return runUsage("one input file at a time");
    o.input = a;
  }
  if (o.input.empty()) return runUsage("no input file");
  if (!o.saveIoDir.empty() && !o.cpu) return runUsage("--save-io works with --cpu (then replay the directory with argus-replay on a GPU machine)");
  if (!o.outputDir.empty() && !o.cpu) return runUsage("--output-dir works with --cpu (a GPU run checks its outputs against the interpreter's)");
  return -1;
}

// The kernel's arguments: tensors from --input files or drawn at random, scalars
// from --arg or the kernel's declared defaults.
struct Arguments {
  std::vector<interp::HostTensor> tensors;  // one per tensor parameter, in order
  std::vector<interp::ArgValue> values;     // one per tensor or scalar parameter
  std::vector<gpu::ReplayCase::Scalar> scalars;
};

int drawArguments(const ir::Function& fn, const RunOptions& o, std::mt19937_64& rng, Arguments& out) {
  out.tensors.reserve(fn.params.size());
  for (const ir::Param& p : fn.params) {
    if (auto given = o.inputTensors.find(p.name); p.kind == ir::ParamKind::Tensor && given != o.inputTensors.end()) {
      out.tensors.push_back(given->second);
      out.values.emplace_back(&out.tensors.back());
    } else if (p.kind == ir::ParamKind::Tensor) {
      std::vector<int64_t> shape;
      for (const ir::DimRef& d : p.dims)
        shape.push_back(d.constant >= 0 ? d.constant : o.sizes.at(fn.sizeNames[static_cast<size_t>(d.sizeIndex)]));
      // The sizes come from the command line: a tensor this machine cannot hold
      // is a usage error, not an uncaught std::length_error/bad_alloc (abort).
      interp::HostTensor probe;
      probe.dtype = p.dtype;
      size_t bytes = probe.elementBytes();
      bool fits = true;
      for (int64_t extent : shape)
        fits = fits && !__builtin_mul_overflow(bytes, static_cast<size_t>(extent), &bytes);
      if (fits) {
        try {
          out.tensors.push_back(interp::HostTensor::zeros(p.dtype, shape));
        } catch (const std::exception&) {
          fits = false;
        }
      }
      if (!fits)
        return runUsage("tensor '" + p.name + "' is too large for this machine's memory at these --size values");
      fillRandom(out.tensors.back(), rng);
      out.values.emplace_back(&out.tensors.back());
    } else if (p.kind == ir::ParamKind::Scalar) {
      double v = 0;
      auto it = o.scalarArgs.find(p.name);
      if (it != o.scalarArgs.end()) {
        char* end = nullptr;
        v = std::strtod(it->second.c_str(), &end);
        if (*end != '\0' || it->second.empty()) return runUsage("--arg " + p.name + ": '" + it->second + "' is not a number");
      } else if (p.defaultValue) {
        v = *p.defaultValue;
      } else {
        return runUsage("kernel '" + fn.name + "' needs --arg " + p.name + "=VALUE: its scalar parameter '" +
                        p.name + ": " + ir::dtypeName(p.dtype) + "' has no default (declare one as in '" + p.name +
                        ": " + ir::dtypeName(p.dtype) + " = " + (ir::isFloat(p.dtype) ? "1.0" : "1") + "')");
      }
      // Converting a double outside int64's range (or NaN) to int64 is undefined.
      if (!ir::isFloat(p.dtype) && !(v >= -0x1p63 && v < 0x1p63))
        return runUsage("--arg " + p.name + ": '" + o.scalarArgs.at(p.name) + "' is not an integer in the range of 64 bits");
      // The kernel receives the value rounded to its dtype, exactly as the interpreter does.
      interp::HostTensor cell = interp::HostTensor::zeros(p.dtype, {1});
      if (ir::isFloat(p.dtype)) {
        out.values.emplace_back(v);
        cell.set(0, v);
      } else {
        out.values.emplace_back(static_cast<int64_t>(v));
        cell.setInt(0, static_cast<int64_t>(v));
      }
      out.scalars.push_back({p.name, ir::dtypeName(p.dtype), v, cell.bytes});
      std::cout << "  " << p.name << " = " << v << (it == o.scalarArgs.end() ? " (its default)" : "") << "\n";
    }
  }
  return -1;
}

// Whether code for `device` (the architecture compiled for) runs what `needed` asks for:
// sm_90a has all of sm_90, which has all of sm_80.
bool archRuns(const std::string& device, const std::string& needed) {
  auto rank = [](const std::string& a) { return a == "sm_90a" ? 2 : a == "sm_90" ? 1 : 0; };
  return rank(device) >= rank(needed);
}

// How the kernel uses each tensor parameter: read (Load, CopyAsync source),
// written (Store), or passed somewhere this analysis does not follow (both).
std::vector<gpu::TensorRole> tensorRoles(const ir::Function& fn) {
  std::map<ir::ValueId, size_t> rootOf;  // a tensor parameter's value or a view of it -> param index
  std::vector<bool> read(fn.params.size()), written(fn.params.size());
  for (size_t i = 0; i < fn.params.size(); ++i)
    if (fn.params[i].kind == ir::ParamKind::Tensor) rootOf[fn.params[i].value] = i;
  auto walk = [&](auto& self, const ir::Block& block) -> void {
    for (const auto& op : block.ops) {
      for (size_t k = 0; k < op->operands.size(); ++k) {
        auto it = rootOf.find(op->operands[k]);
        if (it == rootOf.end()) continue;
        size_t param = it->second;
        if (op->kind == ir::OpKind::View && k == 0) {
          if (!op->results.empty()) rootOf[op->results[0]] = param;
        } else if (op->kind == ir::OpKind::Load || (op->kind == ir::OpKind::CopyAsync && k == 1)) {
          read[param] = true;
        } else if (op->kind == ir::OpKind::Store && k == 0) {
          written[param] = true;
        } else {
          read[param] = written[param] = true;
        }
      }
      for (const ir::Block& region : op->regions) self(self, region);
    }
  };
  walk(walk, fn.body);
  std::vector<gpu::TensorRole> roles;
  for (size_t i = 0; i < fn.params.size(); ++i) {
    if (fn.params[i].kind != ir::ParamKind::Tensor) continue;
    roles.push_back(written[i] ? (read[i] ? gpu::TensorRole::InOut : gpu::TensorRole::Output) : gpu::TensorRole::Input);
  }
  return roles;
}

std::vector<gpu::BenchTensor> benchTensors(const ir::Function& fn, const std::vector<interp::HostTensor>& inputs) {
  std::vector<gpu::TensorRole> roles = tensorRoles(fn);
  std::vector<gpu::BenchTensor> out;
  size_t t = 0;
  for (const ir::Param& p : fn.params) {
    if (p.kind != ir::ParamKind::Tensor) continue;
    gpu::BenchTensor b;
    b.name = p.name;
    b.dtype = *gpu::hostDTypeFromName(ir::dtypeName(p.dtype));
    b.shape = inputs[t].shape;
    b.role = roles[t];
    b.input = inputs[t].bytes;
    out.push_back(std::move(b));
    ++t;
  }
  return out;
}

// Runs the interpreter; prints its fault and returns false when it has one.
bool interpret(const ir::Function& fn, Arguments& args, Compilation& compilation, const CommonOptions& common,
               double& ms) {
  auto start = std::chrono::steady_clock::now();
  std::optional<interp::RunError> error = interp::run(fn, args.values);
  ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (error) printDiagnostics({interp::toDiagnostic(*error)}, compilation.source(), common);
  return !error;
}

// The PTX and metadata of the module for `arch` (reusing `compilation` when it
// already targets it); false after printing the diagnostics.
bool compileFor(Compilation& compilation, const std::string& arch, const CommonOptions& common, std::string& ptx,
                std::string& meta) {
  std::unique_ptr<Compilation> other;
  Compilation* c = &compilation;
  if (compilation.options().arch != arch) {
    CompileOptions options = compilation.options();
    options.arch = arch;
    other = std::make_unique<Compilation>(compilation.source(), options);
    c = other.get();
  }
  ptx = c->ptx();
  if (ptx.empty() || c->hasErrors()) {
    printDiagnostics(c->diagnostics(), c->source(), common);
    return false;
  }
  meta = kernelMetadataJson(c->ir(), arch);
  return true;
}

int saveIo(const RunOptions& o, Compilation& compilation, const ir::Function& fn, const Arguments& before,
           const Arguments& after, uint64_t seed) {
  gpu::ReplayCase replay;
  replay.kernelName = fn.name;
  // --arch, else the source's '# arch:' line (applied to the compilation), else sm_90.
  replay.arch = compilation.options().arch;
  if (!compileFor(compilation, replay.arch, o.common, replay.ptx, replay.metaJson)) return 1;
  replay.seed = seed;
  for (const std::string& s : fn.sizeNames) replay.sizes[s] = o.sizes.at(s);
  replay.scalars = before.scalars;
  replay.tensors = benchTensors(fn, before.tensors);
  for (size_t t = 0; t < replay.tensors.size(); ++t) replay.tensors[t].expected = after.tensors[t].bytes;
  std::string error;
  if (!gpu::saveReplayCase(o.saveIoDir, replay, error)) {
    std::cerr << "argusc run: error: " << error << "\n";
    return 1;
  }
  std::cout << "saved the run to " << o.saveIoDir << " (PTX for " << replay.arch
            << "); replay it on a GPU with: argus-replay " << o.saveIoDir << "\n";
  return 0;
}

int runOnCpu(const RunOptions& o, Compilation& compilation, const ir::Function& fn) {
  uint64_t seed = o.seed.value_or(1);
  std::mt19937_64 rng(seed);
  Arguments args;
  if (int status = drawArguments(fn, o, rng, args); status >= 0) return status;
  Arguments before;
  if (!o.saveIoDir.empty()) {
    before.tensors = args.tensors;
    before.scalars = args.scalars;
  }
  double ms = 0;
  if (!interpret(fn, args, compilation, o.common, ms)) return 1;
  std::vector<int64_t> sizeValues;
  for (const std::string& s : fn.sizeNames) sizeValues.push_back(o.sizes.at(s));
  int64_t grid[3] = {1, 1, 1};
  for (int d = 0; d < 3; ++d) fn.grid[d].evaluate(sizeValues, grid[d]);
  std::cout << "ran " << fn.name << " on the CPU interpreter: grid (" << grid[0] << ", " << grid[1]
            << ", " << grid[2] << "), " << fn.numThreads() << " threads per block, " << ms << " ms\n";
  size_t t = 0;
  for (const ir::Param& p : fn.params)
    if (p.kind == ir::ParamKind::Tensor) std::cout << "  " << p.name << ": " << summarize(args.tensors[t++]) << "\n";
  if (!o.outputDir.empty()) {
    std::vector<gpu::TensorRole> roles = tensorRoles(fn);
    t = 0;
    for (const ir::Param& p : fn.params) {
      if (p.kind != ir::ParamKind::Tensor) continue;
      const interp::HostTensor& tensor = args.tensors[t];
      if (roles[t++] == gpu::TensorRole::Input) continue;
      std::string error;
      if (!writeOutput(o.outputDir, p.name, tensor, error)) {
        std::cerr << "argusc run: error: " << error << "\n";
        return 1;
      }
      std::cout << "wrote " << (std::filesystem::path(o.outputDir) / (p.name + ".npy")).string() << " ("
                << interp::npyTypeNameFor(p.dtype) << ", shape " << shapeText(tensor.shape) << ")\n";
    }
  }
  if (!o.saveIoDir.empty()) return saveIo(o, compilation, fn, before, args, seed);
  return 0;
}

int runOnGpu(const RunOptions& o, gpu::GpuRuntime& runtime, Compilation& compilation, const ir::Function& fn) {
  const gpu::DeviceInfo& device = runtime.device();
  std::string arch = o.archGiven ? compilation.options().arch : device.argusArch();
  if (arch.empty()) {
    std::cerr << "argusc run: error: " << device.name << " has compute capability " << device.major << "."
              << device.minor << "; Argus targets 8.0 (sm_80) and newer; pass --cpu to run on the CPU interpreter\n";
    return 2;
  }
  // The device's architecture must have what the source's '# arch:' line asks for.
  const std::string declared = declaredArch(compilation.source().text());
  if (!o.archGiven && isSupportedArch(declared) && !archRuns(arch, declared)) {
    std::cerr << "argusc run: error: " << compilation.source().name() << " says '# arch: " << declared << "' but "
              << device.name << " (compute capability " << device.major << "." << device.minor << ") runs " << arch
              << " code; run it on a GPU with " << declared << ", or on the CPU interpreter with --cpu\n";
    return 2;
  }
  std::optional<double> flops;
  if (!o.flopsText.empty()) {
    gpu::SizeExpr expr;
    int64_t value = 0;
    std::string error;
    if (!gpu::parseSizeExpression(o.flopsText, expr, error) || !expr.evaluate(o.sizes, value, error))
      return runUsage("--flops: " + error);
    flops = static_cast<double>(value);
  }
  std::string ptx, metaJson, error;
  if (!compileFor(compilation, arch, o.common, ptx, metaJson)) return 1;
  std::vector<gpu::KernelMeta> kernels;
  if (!gpu::parseKernelMetadata(metaJson, kernels, error)) {
    std::cerr << "argusc run: internal error: " << error << "\n";
    return 1;
  }
  const gpu::KernelMeta* meta = nullptr;
  for (const gpu::KernelMeta& k : kernels)
    if (k.name == fn.name) meta = &k;
  if (!meta) {
    std::cerr << "argusc run: internal error: no metadata for kernel '" << fn.name << "'\n";
    return 1;
  }

  // A fresh seed each run (printed, so that --seed reproduces it).
  uint64_t seed = o.seed ? *o.seed : (static_cast<uint64_t>(std::random_device{}()) << 32) ^ std::random_device{}();
  std::cout << "device " << device.ordinal << ": " << device.name << " (compute capability " << device.major << "."
            << device.minor << "); compiled " << fn.name << " for " << arch << "; seed " << seed << "\n";
  std::mt19937_64 rng(seed);
  Arguments args;
  if (int status = drawArguments(fn, o, rng, args); status >= 0) return status;
  std::vector<gpu::BenchTensor> tensors = benchTensors(fn, args.tensors);

  size_t elements = 0;
  for (const gpu::BenchTensor& t : tensors) elements += t.elements();
  bool check = o.check.value_or(elements <= kInterpreterCheckLimit);
  if (check) {
    double ms = 0;
    if (!interpret(fn, args, compilation, o.common, ms)) return 1;
    for (size_t t = 0; t < tensors.size(); ++t) tensors[t].expected = args.tensors[t].bytes;
    std::cout << "reference: the CPU interpreter on the same inputs (" << ms << " ms)\n";
  } else if (o.check) {
    std::cout << "check skipped (--no-check): the outputs are not compared with the interpreter\n";
  } else {
    std::cout << "check skipped: " << elements << " elements in all tensors is above the interpreter's limit of "
              << kInterpreterCheckLimit << "; pass --check to compare anyway (slow)\n";
  }
  std::map<std::string, std::vector<uint8_t>> scalars;
  for (const gpu::ReplayCase::Scalar& s : args.scalars) scalars[s.name] = s.bits;
  gpu::BenchOutcome outcome = gpu::benchmarkKernel(runtime, ptx, *meta, o.sizes, tensors, scalars,
                                                   [&] { gpu::BenchOptions b = o.bench; b.flops = flops; b.check = check; return b; }());
  std::cout << outcome.report;
  if (!outcome.error.empty()) {
    std::cerr << "argusc run: error: " << outcome.error << "\n";
    return 1;
  }
  return outcome.ok ? 0 : 1;
}

}  // namespace

int runCommand(const std::vector<std::string>& args) {
  RunOptions o;
  if (int status = parseRunOptions(args, o); status >= 0) return status;

  // The GPU first: without one there is nothing to compile for.
  std::unique_ptr<gpu::GpuRuntime> runtime;
  if (!o.cpu) {
    gpu::OpenOptions open;
    open.device = o.device;
    // Tests point this at a missing library to see the no-driver path on any machine.
    if (const char* driver = std::getenv("ARGUS_CUDA_DRIVER"); driver && *driver) open.driverLibrary = driver;
    std::string error;
    runtime = gpu::GpuRuntime::open(error, open);
    if (!runtime) {
      std::cerr << "argusc run: no GPU: " << error << "; pass --cpu to run on the CPU interpreter\n";
      return 2;
    }
  }

  DiagnosticSink loadDiags;
  std::optional<SourceFile> file = loadSourceFile(o.input, loadDiags);
  if (!file) {
    printDiagnostics(loadDiags.diagnostics(), SourceFile(o.input, ""), o.common);
    return 1;
  }
  // The source's '# arch:' line decides as for argusc (on a GPU, the device's architecture
  // is compiled for, once runOnGpu has checked that it has what the line asks for).
  applySourceArch(o.common, *file);
  Compilation compilation(std::move(*file), o.common.compile);
  const ir::Module& module = compilation.ir();
  if (compilation.hasErrors()) {
    printDiagnostics(compilation.diagnostics(), compilation.source(), o.common);
    return 1;
  }
  const ir::Function* fn = nullptr;
  for (const auto& f : module.functions)
    if (o.kernelName.empty() || f->name == o.kernelName) { fn = f.get(); break; }
  if (!fn) {
    std::string known;
    for (const auto& f : module.functions) known += (known.empty() ? "" : ", ") + f->name;
    return runUsage(o.kernelName.empty() ? "the file has no kernel"
                                         : "no kernel named '" + o.kernelName + "' (kernels: " + known + ")");
  }
  for (const auto& [name, value] : o.scalarArgs) {
    bool known = false;
    for (const ir::Param& p : fn->params) known = known || (p.kind == ir::ParamKind::Scalar && p.name == name);
    if (!known) return runUsage("--arg " + name + ": kernel '" + fn->name + "' has no scalar parameter '" + name + "'");
  }
  std::string inputError;
  if (!loadInputs(*fn, o.inputFiles, o.sizes, o.inputTensors, inputError)) return runUsage(inputError);
  for (const std::string& s : fn->sizeNames)
    if (!o.sizes.count(s))
      return runUsage("kernel '" + fn->name + "' needs --size " + s + "=VALUE (or an --input whose shape gives it)");
  return runtime ? runOnGpu(o, *runtime, compilation, *fn) : runOnCpu(o, compilation, *fn);
}

}  // namespace argus::cli

// `argusc run --cpu FILE.ag`: runs a kernel on the CPU interpreter with random
// inputs and prints a summary of every tensor afterwards.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <iostream>
#include <map>
#include <random>
#include <sstream>

#include "ir/ir.h"
#include "runtime/interp/interpreter.h"
#include "tools/cli_common.h"

namespace argus::cli {
namespace {

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

}  // namespace

int runCommand(const std::vector<std::string>& args) {
  CommonOptions common;
  bool cpu = false;
  std::string input, kernelName;
  std::map<std::string, int64_t> sizes;
  std::map<std::string, std::string> scalarArgs;
  uint64_t seed = 1;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    std::string error, name, value;
    int consumed = parseCommonOption(args, i, common, error);
    if (consumed < 0) return runUsage(error);
    if (consumed > 0) { i += static_cast<size_t>(consumed - 1); continue; }
    auto next = [&](const char* what) -> const std::string* {
      if (i + 1 >= args.size()) return nullptr;
      (void)what;
      return &args[++i];
    };
    if (a == "--cpu") { cpu = true; continue; }
    if (a == "--kernel") {
      const std::string* v = next("--kernel");
      if (!v) return runUsage("--kernel needs a name");
      kernelName = *v;
      continue;
    }
    if (a == "--size" || a == "--arg") {
      const std::string* v = next(a.c_str());
      if (!v || !parseAssignment(*v, name, value)) return runUsage(a + " needs NAME=VALUE");
      if (a == "--arg") { scalarArgs[name] = value; continue; }
      char* end = nullptr;
      long long n = std::strtoll(value.c_str(), &end, 10);
      if (*end != '\0' || n < 0 || n > (1ll << 31) - 1)
        return runUsage("--size " + name + ": '" + value + "' is not a size (0 to 2^31-1)");
      sizes[name] = n;
      continue;
    }
    if (a == "--seed") {
      const std::string* v = next("--seed");
      if (!v) return runUsage("--seed needs a number");
      seed = std::strtoull(v->c_str(), nullptr, 10);
      continue;
    }
    if (!a.empty() && a[0] == '-') return runUsage("unknown option '" + a + "'");
    if (!input.empty()) return runUsage("one input file at a time");
    input = a;
  }
  if (!cpu) return runUsage("GPU runs are not available in this build yet; pass --cpu to use the interpreter");
  if (input.empty()) return runUsage("no input file");

  DiagnosticSink loadDiags;
  std::optional<SourceFile> file = loadSourceFile(input, loadDiags);
  if (!file) {
    printDiagnostics(loadDiags.diagnostics(), SourceFile(input, ""), common);
    return 1;
  }
  Compilation compilation(std::move(*file), common.compile);
  const ir::Module& module = compilation.ir();
  if (compilation.hasErrors()) {
    printDiagnostics(compilation.diagnostics(), compilation.source(), common);
    return 1;
  }
  const ir::Function* fn = nullptr;
  for (const auto& f : module.functions)
    if (kernelName.empty() || f->name == kernelName) { fn = f.get(); break; }
  if (!fn) {
    std::string known;
    for (const auto& f : module.functions) known += (known.empty() ? "" : ", ") + f->name;
    return runUsage(kernelName.empty() ? "the file has no kernel"
                                       : "no kernel named '" + kernelName + "' (kernels: " + known + ")");
  }
  for (const std::string& s : fn->sizeNames)
    if (!sizes.count(s)) return runUsage("kernel '" + fn->name + "' needs --size " + s + "=VALUE");

  std::mt19937_64 rng(seed);
  std::vector<interp::HostTensor> tensors;
  tensors.reserve(fn->params.size());
  std::vector<interp::ArgValue> argValues;
  for (const ir::Param& p : fn->params) {
    if (p.kind == ir::ParamKind::Tensor) {
      std::vector<int64_t> shape;
      for (const ir::DimRef& d : p.dims)
        shape.push_back(d.constant >= 0 ? d.constant : sizes[fn->sizeNames[static_cast<size_t>(d.sizeIndex)]]);
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
          tensors.push_back(interp::HostTensor::zeros(p.dtype, shape));
        } catch (const std::exception&) {
          fits = false;
        }
      }
      if (!fits)
        return runUsage("tensor '" + p.name + "' is too large for this machine's memory at these --size values");
      fillRandom(tensors.back(), rng);
      argValues.emplace_back(&tensors.back());
    } else if (p.kind == ir::ParamKind::Scalar) {
      double v = ir::isFloat(p.dtype) ? std::uniform_real_distribution<double>(-1, 1)(rng)
                                      : static_cast<double>(rng() % 16);
      if (auto it = scalarArgs.find(p.name); it != scalarArgs.end()) {
        char* end = nullptr;
        v = std::strtod(it->second.c_str(), &end);
        if (*end != '\0') return runUsage("--arg " + p.name + ": '" + it->second + "' is not a number");
      }
      // Converting a double outside int64's range (or NaN) to int64 is undefined.
      if (!ir::isFloat(p.dtype) && !(v >= -0x1p63 && v < 0x1p63))
        return runUsage("--arg " + p.name + ": '" + scalarArgs[p.name] + "' is not an integer in the range of 64 bits");
      if (ir::isFloat(p.dtype)) argValues.emplace_back(v);
      else argValues.emplace_back(static_cast<int64_t>(v));
      std::cout << "  " << p.name << " = " << v << "\n";
    }
  }

  auto start = std::chrono::steady_clock::now();
  std::optional<interp::RunError> error = interp::run(*fn, argValues);
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (error) {
    printDiagnostics({interp::toDiagnostic(*error)}, compilation.source(), common);
    return 1;
  }
  std::vector<int64_t> sizeValues;
  for (const std::string& s : fn->sizeNames) sizeValues.push_back(sizes[s]);
  int64_t grid[3] = {1, 1, 1};
  for (int d = 0; d < 3; ++d) fn->grid[d].evaluate(sizeValues, grid[d]);
  std::cout << "ran " << fn->name << " on the CPU interpreter: grid (" << grid[0] << ", " << grid[1]
            << ", " << grid[2] << "), " << fn->numThreads() << " threads per block, " << ms << " ms\n";
  size_t t = 0;
  for (const ir::Param& p : fn->params)
    if (p.kind == ir::ParamKind::Tensor) std::cout << "  " << p.name << ": " << summarize(tensors[t++]) << "\n";
  return 0;
}

}  // namespace argus::cli

// Helpers of the Hopper end-to-end tests (driver_hopper_test.cpp,
// driver_cluster_test.cpp): compiling for sm_90a, ptxas -v's report, and running
// a linear kernel C = A @ W^T on the interpreter.
#pragma once

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <unistd.h>

#include "driver/compilation.h"
#include "runtime/interp/interpreter.h"

namespace argus::testing::hopper {

namespace fs = std::filesystem;
using argus::interp::ArgValue;
using argus::interp::HostTensor;

inline constexpr const char* kPtxas = "/usr/local/cuda/bin/ptxas";

inline std::unique_ptr<argus::Compilation> compile(const std::string& name, const std::string& text,
                                            const std::string& arch = "sm_90a") {
  argus::CompileOptions options;
  options.arch = arch;
  return std::make_unique<argus::Compilation>(argus::SourceFile(name, text), options);
}

inline std::string errorsOf(argus::Compilation& c) {
  std::string out;
  for (const argus::Diagnostic& d : c.diagnostics())
    if (d.severity == argus::Severity::Error) out += std::string(d.code()) + " " + d.message + "\n";
  return out;
}

// ptxas -v's report on `ptx` (empty when ptxas is missing).
inline std::string ptxasReport(const std::string& ptx) {
  if (!fs::exists(kPtxas)) return {};
  fs::path dir = fs::temp_directory_path() / ("argus_hopper_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "k.ptx") << ptx;
  std::string command = std::string(kPtxas) + " -arch=sm_90a -v " + (dir / "k.ptx").string() + " -o " +
                        (dir / "k.cubin").string() + " 2>&1";
  std::string out;
  if (FILE* pipe = ::popen(command.c_str(), "r")) {
    char buffer[4096];
    while (size_t n = std::fread(buffer, 1, sizeof buffer, pipe)) out.append(buffer, n);
    ::pclose(pipe);
  }
  fs::remove_all(dir);
  return out;
}

inline HostTensor randomBf16(std::vector<int64_t> shape, std::mt19937& rng) {
  HostTensor t = HostTensor::zeros(argus::ir::DType::BF16, std::move(shape));
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  for (size_t i = 0; i < t.size(); ++i) t.set(i, dist(rng));
  return t;
}

// C of one kernel of `text` on the interpreter, for A (m, k) and W (n, k).
inline std::vector<double> runLinear(const std::string& name, const std::string& text, const HostTensor& a,
                              const HostTensor& w, int64_t m, int64_t n) {
  auto c = compile(name, text);
  EXPECT_EQ(errorsOf(*c), "") << name;
  if (c->ir().functions.size() != 1) return {};
  HostTensor aCopy = a, wCopy = w, out = HostTensor::zeros(argus::ir::DType::BF16, {m, n});
  std::vector<ArgValue> args = {&aCopy, &wCopy, &out};
  auto error = argus::interp::run(*c->ir().functions[0], args);
  EXPECT_FALSE(error) << name << ": " << (error ? error->message : "");
  std::vector<double> values;
  for (size_t i = 0; i < out.size(); ++i) values.push_back(out.get(i));
  return values;
}

}  // namespace argus::testing::hopper

// Helpers of the evaluator, task and cost-model tests: a scratch directory
// with task files, and the kernels the tests evaluate.
#pragma once

#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

#include "tests/unit/test_sources.h"

namespace argus::testing {

// A fresh directory under the system's temp dir, removed with the object.
class ScratchDir {
 public:
  ScratchDir() {
    static std::atomic<int> counter{0};
    path_ = std::filesystem::temp_directory_path() /
            ("argus_agent_eval_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(path_ / name, std::ios::binary) << text;
    return (path_ / name).string();
  }

 private:
  std::filesystem::path path_;
};

// Replaces the first occurrence of `from` (which must occur) by `to`.
inline std::string replaced(std::string text, const std::string& from, const std::string& to) {
  size_t at = text.find(from);
  if (at == std::string::npos) return "<" + from + " not found>";
  return text.replace(at, from.size(), to);
}

// The naive bf16 GEMM the agent starts from (examples/agent/gemm_naive.ag).
inline std::string naiveGemm() { return readExample("agent/gemm_naive.ag"); }

// A task over `kernelSource` at small shapes, written into `dir`; returns the task file's path.
inline std::string writeSmallTask(const ScratchDir& dir, const std::string& kernelSource,
                                  const std::string& extra = "") {
  dir.write("kernel.ag", kernelSource);
  return dir.write("small.task.json", R"({"name": "small", "kernel": "kernel.ag",
    "validate": [{"M": 64, "N": 48, "K": 40}, {"M": 33, "N": 70, "K": 17}],
    "measure": {"M": 4096, "N": 4096, "K": 4096},
    "flops": "2*M*N*K")" + extra + "}");
}

}  // namespace argus::testing

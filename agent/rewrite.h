// Deterministic program transformations of a `.ag` kernel, the offline
// agent's hands. Each takes the source text and an args object and returns
// new source text (or why it does not apply); none ever needs an LLM. The
// result is only ever parsed, checked, compiled and run by the caller.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent/knowledge.h"

namespace argus::agent {

struct RewriteResult {
  bool applied = false;
  std::string source;       // the new program when applied
  std::string description;  // what changed, one line ("BM 64 -> 128")
  std::string whyNot;       // why it did not apply
};

// Parses and checks `source` (frontend only, no codegen) and describes it.
KernelFeatures analyzeKernel(const std::string& source, const std::string& fileName = "kernel.ag");

// The ids rewrite() accepts, e.g. "set_params", "stage_operands_in_shared",
// "async_pipeline", "tensor_core_mma", "swizzle_shared", "set_stages".
std::vector<std::string> rewriteIds();

RewriteResult rewrite(const std::string& rewriteId, const std::string& source, const nlohmann::json& args);

}  // namespace argus::agent

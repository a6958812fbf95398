// The knowledge base: GPU optimization techniques and repairs as data
// (agent/knowledge/*.json), never prose buried in code. Each entry names when
// it applies (kernel features, diagnostic codes), what it does (a
// deterministic rewrite from rewrite.h with its parameter choices, or a prompt
// fragment for an LLM), the invariants it must keep or add, and the effect
// it is expected to have. See docs/agent.md for the file format.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace argus::agent {

// What the planner knows about a kernel without running it (rewrite.cpp
// computes it from the source through the frontend).
struct KernelFeatures {
  std::string kernelName;
  bool parsed = false;           // false: the source does not parse/check
  bool hasDot = false;
  bool usesShared = false;       // shared(...) allocations
  bool usesCopyAsync = false;
  bool usesPipelined = false;    // for ... in pipelined(...)
  bool usesMmaLayout = false;    // layout=mma(...)
  bool usesSwizzle = false;
  bool usesTensorCoreDtype = false;  // dot operands in bf16/f16
  bool usesCopyBulk = false;         // copy_bulk (TMA), the Hopper path
  bool specialized = false;          // pipelined(..., specialize=True)
  bool persistent = false;           // blocks walk tiles (reads num_programs())
  bool grid1d = false;               // grid=(G,)
  std::string arch;                  // the task's target ("sm_90a"); empty when unknown
  // A GEMM written without dot(): register tiles of A and B multiplied out
  // (outer products accumulated in a loop), the naive starting point.
  bool registerOperands = false;
  std::string operandDtype;          // "bf16", "f16", "f32": the product's operands
  int warps = 0;                     // the @kernel warps= value when constant
  // Const parameters that, doubled, would take warps= past the 32 warps a block may have.
  std::set<std::string> warpsLimitedConsts;
  std::map<std::string, int64_t> constParams;  // `NAME: const = V` defaults
  // Short words the knowledge base matches on: "dot", "shared", "copy_async",
  // "pipelined", "mma", "swizzle", "bf16", "register_operands", "copy_bulk",
  // "grid_1d", the target such as "sm_90a", ...
  std::vector<std::string> tags() const;
};

struct KnowledgeEntry {
  std::string name;         // unique, e.g. "stage_operands_in_shared"
  std::string kind;         // "optimization" | "repair"
  std::string summary;      // one line for progress output and prompts
  // Preconditions: every `requires` tag present, no `forbids` tag present, and
  // (for repairs) one of `diagnostics` among the candidate's diagnostic codes.
  std::vector<std::string> requires_, forbids, diagnostics;
  std::string rewrite;          // a rewrite id from rewrite.h; empty: LLM-only
  // Parameter choices the planner samples among: each alternative is one
  // args object passed to the rewrite (e.g. {"BM":128,"BN":128}).
  std::vector<nlohmann::json> alternatives;
  // "consts": alternatives made from the kernel at hand, each one const
  // parameter doubled or halved (any kernel's parameter search).
  std::string alternativesFrom;
  std::string prompt;           // guidance for an LLM applying the technique
  std::vector<std::string> invariants;  // what the checker must still prove
  std::string expectedEffect;   // e.g. "2-4x: global traffic / BK"
  double prior = 0.5;           // initial value estimate in [0, 1]
  // Coupled choices: shared-memory bytes the rewrite may add per stage, etc.
  nlohmann::json constraints = nlohmann::json::object();
};

struct KnowledgeBase {
  std::vector<KnowledgeEntry> entries;
  const KnowledgeEntry* find(const std::string& name) const;
  // Entries whose preconditions hold for these features and diagnostic codes.
  std::vector<const KnowledgeEntry*> applicable(const KernelFeatures& features,
                                                const std::vector<std::string>& diagnosticCodes) const;
};

// Loads every *.json file in `dir` (sorted by name). A malformed file or entry
// is an error naming the file and the entry; nothing is loaded half-way.
std::optional<KnowledgeBase> loadKnowledgeBase(const std::string& dir, std::string& error);

// The directory shipped with the sources (ARGUS_SOURCE_DIR/agent/knowledge
// at build time), overridable with ARGUS_KNOWLEDGE_DIR.
std::string defaultKnowledgeDir();

}  // namespace argus::agent

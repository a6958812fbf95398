// The knowledge base (agent/knowledge.h): the shipped entries load and refer
// to real rewrites and diagnostics, malformed files are rejected with the file
// and entry named, and applicable() matches on kernel features and codes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>

#include <unistd.h>

#include "agent/knowledge.h"
#include "agent/rewrite.h"
#include "support/diagnostic.h"
#include "test_sources.h"

namespace fs = std::filesystem;
using argus::agent::KnowledgeBase;
using argus::agent::KnowledgeEntry;
using argus::agent::loadKnowledgeBase;

namespace {

KnowledgeBase shipped() {
  std::string error;
  std::optional<KnowledgeBase> kb = loadKnowledgeBase(std::string(ARGUS_SOURCE_DIR) + "/agent/knowledge", error);
  EXPECT_TRUE(kb) << error;
  return kb ? *kb : KnowledgeBase{};
}

// A fresh directory holding `files` (name -> text).
fs::path writeDir(const std::string& test, const std::vector<std::pair<std::string, std::string>>& files) {
  fs::path dir = fs::temp_directory_path() / ("argus_kb_" + test + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (const auto& [name, text] : files) std::ofstream(dir / name) << text;
  return dir;
}

std::string loadError(const std::string& test, const std::vector<std::pair<std::string, std::string>>& files) {
  fs::path dir = writeDir(test, files);
  std::string error;
  std::optional<KnowledgeBase> kb = loadKnowledgeBase(dir.string(), error);
  EXPECT_FALSE(kb) << test;
  fs::remove_all(dir);
  return error;
}

std::vector<std::string> names(const std::vector<const KnowledgeEntry*>& entries) {
  std::vector<std::string> out;
  for (const KnowledgeEntry* e : entries) out.push_back(e->name);
  return out;
}

bool has(const std::vector<std::string>& v, const std::string& x) { return std::find(v.begin(), v.end(), x) != v.end(); }

const char* kGoodEntry = R"({"name": "e", "kind": "optimization", "summary": "s", "rewrite": "set_params",
  "alternatives": [{"BM": 64}], "expected_effect": "x"})";

}  // namespace

TEST(AgentKnowledge, ShippedEntriesAreComplete) {
  KnowledgeBase kb = shipped();
  ASSERT_GE(kb.entries.size(), 25u);
  const std::vector<std::string> ids = argus::agent::rewriteIds();
  std::set<std::string> rewritesUsed;
  for (const KnowledgeEntry& e : kb.entries) {
    if (!e.rewrite.empty()) {
      EXPECT_TRUE(has(ids, e.rewrite)) << e.name << " names rewrite " << e.rewrite;
      rewritesUsed.insert(e.rewrite);
    }
    EXPECT_FALSE(e.summary.empty()) << e.name;
    EXPECT_FALSE(e.expectedEffect.empty()) << e.name;
    EXPECT_FALSE(e.invariants.empty()) << e.name;
    for (const std::string& code : e.diagnostics) EXPECT_TRUE(argus::diagIdFromCode(code)) << e.name << " " << code;
    if (e.kind == "repair") {
      EXPECT_FALSE(e.diagnostics.empty()) << e.name;
    }
    if (e.rewrite.empty()) {
      EXPECT_FALSE(e.prompt.empty()) << e.name << " is LLM-only but has no prompt";
    }
  }
  // Every rewrite is reachable from some entry.
  for (const std::string& id : ids) EXPECT_TRUE(rewritesUsed.count(id)) << id;
  // The techniques of DESIGN.md section 9 each have an entry.
  for (const char* name : {"tile_sizes", "stage_operands_in_shared", "async_copies_pipelined", "pipeline_depth",
                           "swizzle_for_ldmatrix", "vector_loads", "ldmatrix_fragments", "tensor_core_mma",
                           "wgmma_warpgroup", "tma_bulk_copies", "warp_specialization", "split_k",
                           "stream_k_persistent", "rasterize_grid", "register_cap", "epilogue_fusion"})
    EXPECT_TRUE(kb.find(name)) << name;
  // Repairs for the budget, bank-conflict, register, barrier and async-wait diagnostics.
  for (const char* code : {"AG2031", "AG2032", "AG2033", "AG2001", "AG2002", "AG2005", "AG2006", "AG3049", "AG4031"}) {
    bool found = false;
    for (const KnowledgeEntry& e : kb.entries) found |= has(e.diagnostics, code);
    EXPECT_TRUE(found) << code;
  }
}

TEST(AgentKnowledge, ShippedAlternativesApplyWhereTheyMatch) {
  // Every alternative of every entry with a rewrite applies to (or explains
  // itself on) the naive GEMM walked to where the entry is applicable.
  KnowledgeBase kb = shipped();
  std::string naive = argus::testing::readExample("agent/gemm_naive.ag");
  std::string tc = argus::testing::readExample("gemm_tc.ag");
  for (const std::string& source : {naive, tc}) {
    argus::agent::KernelFeatures f = argus::agent::analyzeKernel(source);
    for (const KnowledgeEntry* e : kb.applicable(f, {})) {
      for (const nlohmann::json& alt : e->alternatives) {
        argus::agent::RewriteResult r = argus::agent::rewrite(e->rewrite, source, alt);
        EXPECT_TRUE(r.applied || !r.whyNot.empty()) << e->name << " " << alt.dump();
      }
    }
  }
}

TEST(AgentKnowledge, ApplicableMatchesFeaturesAndDiagnostics) {
  KnowledgeBase kb = shipped();
  argus::agent::KernelFeatures naive = argus::agent::analyzeKernel(argus::testing::readExample("agent/gemm_naive.ag"));
  std::vector<std::string> tags = naive.tags();
  EXPECT_TRUE(has(tags, "register_operands"));
  EXPECT_TRUE(has(tags, "bf16"));
  EXPECT_FALSE(has(tags, "dot"));
  std::vector<std::string> forNaive = names(kb.applicable(naive, {}));
  EXPECT_TRUE(has(forNaive, "stage_operands_in_shared"));
  EXPECT_TRUE(has(forNaive, "tile_sizes"));
  EXPECT_FALSE(has(forNaive, "tensor_core_mma"));          // needs a dot
  EXPECT_FALSE(has(forNaive, "repair_bank_conflicts"));    // needs AG2032
  EXPECT_FALSE(has(forNaive, "async_copies_pipelined"));

  argus::agent::KernelFeatures tc = argus::agent::analyzeKernel(argus::testing::readExample("gemm_tc.ag"));
  EXPECT_EQ(tc.warps, 4);
  EXPECT_EQ(tc.constParams.at("STAGES"), 4);
  std::vector<std::string> forTc = names(kb.applicable(tc, {}));
  EXPECT_TRUE(has(forTc, "pipeline_depth"));
  EXPECT_TRUE(has(forTc, "tile_sizes_mma"));
  EXPECT_FALSE(has(forTc, "tensor_core_mma"));   // already mma
  EXPECT_FALSE(has(forTc, "stage_operands_in_shared"));
  EXPECT_FALSE(has(forTc, "repair_shared_budget_stages"));
  std::vector<std::string> overBudget = names(kb.applicable(tc, {"AG2031"}));
  EXPECT_TRUE(has(overBudget, "repair_shared_budget_stages"));
  EXPECT_TRUE(has(overBudget, "repair_shared_budget_tiles"));
  EXPECT_FALSE(has(overBudget, "repair_bank_conflicts"));
  EXPECT_TRUE(has(names(kb.applicable(tc, {"AG2032"})), "repair_bank_conflicts"));

  argus::agent::KernelFeatures broken = argus::agent::analyzeKernel("@kernel(grid=(1,))\ndef k(x: Tensor[f32, (4,)]):\n    y = nope\n");
  EXPECT_FALSE(broken.parsed);
  EXPECT_EQ(broken.tags(), std::vector<std::string>{"does_not_compile"});
}

TEST(AgentKnowledge, MalformedFilesNameFileAndEntry) {
  std::string e = loadError("syntax", {{"a.json", "{\"entries\": [ {\"name\": \"x\", }"}});
  EXPECT_NE(e.find("a.json"), std::string::npos) << e;
  EXPECT_NE(e.find("parse error"), std::string::npos) << e;

  e = loadError("missing", {{"b.json", R"({"entries": [{"name": "tile", "kind": "optimization", "summary": "s"}]})"}});
  EXPECT_EQ(e, "b.json: entry 0 'tile': missing \"expected_effect\"");

  e = loadError("badrewrite", {{"c.json", std::string("[") + kGoodEntry + R"(, {"name": "y", "kind": "optimization",
      "summary": "s", "rewrite": "make_fast", "expected_effect": "x"}])"}});
  EXPECT_NE(e.find("c.json: entry 1 'y': \"rewrite\" is \"make_fast\""), std::string::npos) << e;

  e = loadError("badkind", {{"d.json", R"([{"name": "z", "kind": "magic", "summary": "s", "prompt": "p", "expected_effect": "x"}])"}});
  EXPECT_NE(e.find("d.json: entry 0 'z': \"kind\""), std::string::npos) << e;

  e = loadError("badcode", {{"e.json", R"([{"name": "r", "kind": "repair", "summary": "s", "prompt": "p",
      "diagnostics": ["AG9999"], "expected_effect": "x"}])"}});
  EXPECT_NE(e.find("AG9999"), std::string::npos) << e;

  e = loadError("norewrite", {{"f.json", R"([{"name": "r", "kind": "repair", "summary": "s", "prompt": "p", "expected_effect": "x"}])"}});
  EXPECT_NE(e.find("needs the \"diagnostics\""), std::string::npos) << e;

  e = loadError("prior", {{"g.json", R"([{"name": "p", "kind": "optimization", "summary": "s", "prompt": "p",
      "expected_effect": "x", "prior": 1.5}])"}});
  EXPECT_NE(e.find("\"prior\""), std::string::npos) << e;

  e = loadError("unknownfield", {{"h.json", R"([{"name": "p", "kind": "optimization", "summary": "s", "prompt": "p",
      "expected_effect": "x", "requirez": ["dot"]}])"}});
  EXPECT_NE(e.find("unknown field \"requirez\""), std::string::npos) << e;

  e = loadError("duplicate", {{"1.json", std::string("[") + kGoodEntry + "]"}, {"2.json", std::string("[") + kGoodEntry + "]"}});
  EXPECT_NE(e.find("2.json: entry 0 'e': the name is already used by an entry in 1.json"), std::string::npos) << e;

  std::string error;
  EXPECT_FALSE(loadKnowledgeBase("/nonexistent/argus/knowledge", error));
  EXPECT_NE(error.find("/nonexistent/argus/knowledge"), std::string::npos);
}

TEST(AgentKnowledge, LoadsGoodDirectoryInNameOrder) {
  fs::path dir = writeDir("good", {{"2.json", std::string("{\"entries\": [") + kGoodEntry + "]}"},
                                  {"1.json", R"([{"name": "a", "kind": "repair", "summary": "s", "prompt": "p",
                                     "diagnostics": ["AG2031"], "requires": ["shared"], "prior": 0.25,
                                     "constraints": {"max_shared_bytes": 232448}, "expected_effect": "x"}])"},
                                  {"notes.txt", "ignored"}});
  std::string error;
  std::optional<KnowledgeBase> kb = loadKnowledgeBase(dir.string(), error);
  fs::remove_all(dir);
  ASSERT_TRUE(kb) << error;
  ASSERT_EQ(kb->entries.size(), 2u);
  EXPECT_EQ(kb->entries[0].name, "a");
  EXPECT_DOUBLE_EQ(kb->entries[0].prior, 0.25);
  EXPECT_EQ(kb->entries[0].constraints["max_shared_bytes"], 232448);
  EXPECT_EQ(kb->entries[1].alternatives.size(), 1u);
  EXPECT_EQ(kb->find("e"), &kb->entries[1]);
  EXPECT_EQ(kb->find("nope"), nullptr);
}

TEST(AgentKnowledge, DefaultDirectoryFollowsEnvironment) {
  const char* old = std::getenv("ARGUS_KNOWLEDGE_DIR");
  std::string saved = old ? old : "";
  unsetenv("ARGUS_KNOWLEDGE_DIR");
  EXPECT_EQ(argus::agent::defaultKnowledgeDir(), std::string(ARGUS_SOURCE_DIR) + "/agent/knowledge");
  setenv("ARGUS_KNOWLEDGE_DIR", "/tmp/kb", 1);
  EXPECT_EQ(argus::agent::defaultKnowledgeDir(), "/tmp/kb");
  if (old) setenv("ARGUS_KNOWLEDGE_DIR", saved.c_str(), 1);
  else unsetenv("ARGUS_KNOWLEDGE_DIR");
}

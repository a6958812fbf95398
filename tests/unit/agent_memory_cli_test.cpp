// `argus-agent memory list|show|export`: output and error cases.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "agent/memory.h"

namespace argus::agent {
namespace {

namespace fs = std::filesystem;

struct Result {
  int status = -1;
  std::string out, err;
};

Result run(std::vector<std::string> args) {
  Result r;
  r.status = runMemoryCommand(args, r.out, r.err);
  return r;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// A database with a small lineage: 1 baseline -> 2 tiling -> 3 swizzle (invalid), plus 4 of another task.
class AgentMemoryCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() / ("argus_memory_cli_" + std::string(info->name()) + "_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    db_ = (dir_ / "memory.db").string();
    std::string error;
    auto memory = ExperienceMemory::open(db_, error);
    ASSERT_NE(memory, nullptr) << error;
    Case base;
    base.runId = "run-7";
    base.task = "gemm";
    base.action = "baseline";
    base.compiled = base.correct = true;
    base.timeMs = 2.0;
    base.timeSource = "model";
    base.speedup = 1.0;
    base.taskFeatures = {{"dtype", "f16"}};
    base.source = "def gemm():\n    pass\n";
    const int64_t one = memory->record(base);
    Case tiled = base;
    tiled.predecessor = one;
    tiled.action = "tiling";
    tiled.actionArgs = {{"tile_m", 128}};
    tiled.timeMs = 1.0;
    tiled.speedRatio = 2.0;
    tiled.speedup = 2.0;
    tiled.reward = 0.9;
    tiled.stateHash = "feedbeef";
    tiled.diagnosticCodes = {"W0301"};
    tiled.diagnostics = nlohmann::json::array({{{"code", "W0301"}, {"message", "a warning"}}});
    tiled.source = "def gemm_tiled():\n    return 1\n";
    const int64_t two = memory->record(tiled);
    Case broken = base;
    broken.predecessor = two;
    broken.action = "swizzle";
    broken.compiled = false;
    broken.timeMs.reset();
    broken.speedup.reset();
    memory->record(broken);
    Case other = base;
    other.task = "softmax";
    other.taskFeatures = {{"dtype", "f32"}};
    memory->record(other);
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path dir_;
  std::string db_;
};

TEST_F(AgentMemoryCommand, ListPrintsATableNewestFirst) {
  const Result r = run({"list", "--db", db_});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(r.err.empty()) << r.err;
  EXPECT_EQ(r.out.rfind("id  pred  task     action    bucket     speedup  time ms\n", 0), 0u) << r.out;
  EXPECT_TRUE(contains(r.out, "\n2   1     gemm     tiling    effective  2.000    1.0000\n")) << r.out;
  EXPECT_TRUE(contains(r.out, "\n3   2     gemm     swizzle   invalid    -        -\n")) << r.out;
  EXPECT_LT(r.out.find("\n4 "), r.out.find("\n1 ")) << "newest first:\n" << r.out;
}

TEST_F(AgentMemoryCommand, ListFiltersAndLimits) {
  Result r = run({"memory", "list", "--db", db_, "--task", "gemm", "--bucket=effective"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "\n2 ")) << r.out;
  EXPECT_FALSE(contains(r.out, "\n1 ")) << r.out;
  EXPECT_FALSE(contains(r.out, "\n4 ")) << r.out;
  r = run({"list", "--db", db_, "--feature", "dtype=f32"});
  EXPECT_TRUE(contains(r.out, "\n4 ")) << r.out;
  EXPECT_FALSE(contains(r.out, "\n1 ")) << r.out;
  r = run({"list", "--db", db_, "--limit", "2"});
  EXPECT_TRUE(contains(r.out, "\n4 ") && contains(r.out, "\n3 ")) << r.out;
  EXPECT_FALSE(contains(r.out, "\n2 ")) << r.out;
  EXPECT_TRUE(contains(r.out, "--limit 0 lists all")) << r.out;
  r = run({"list", "--db", db_, "--action", "vectorize"});
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out, "no cases match these filters\n");
}

TEST_F(AgentMemoryCommand, ShowPrintsEveryFieldAndTheSourceLast) {
  const Result r = run({"show", "2", "--db", db_});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.rfind("case 2\n", 0), 0u) << r.out;
  for (const char* expected :
       {"predecessor:", "successors:        3", "downstream score:", "run:               run-7", "task:              gemm",
        "task features:     {\"dtype\":\"f16\"}", "state hash:        feedbeef", "action:            tiling",
        "action args:       {\"tile_m\":128}", "compiled:          yes", "correct:           yes",
        "bucket:            effective", "time ms:           1.0000 (model)", "speed ratio:       2.000",
        "speedup:           2.000", "confidence:", "reward:            0.9000", "created:           20",
        "diagnostic codes:  W0301", "\"message\": \"a warning\""})
    EXPECT_TRUE(contains(r.out, expected)) << expected << "\n" << r.out;
  const std::string tail = "source:\ndef gemm_tiled():\n    return 1\n";
  ASSERT_GE(r.out.size(), tail.size());
  EXPECT_EQ(r.out.substr(r.out.size() - tail.size()), tail) << r.out;
}

TEST_F(AgentMemoryCommand, ShowRejectsBadAndUnknownIds) {
  Result r = run({"show", "abc", "--db", db_});
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(contains(r.err, "'abc' is not a case id")) << r.err;
  r = run({"show", "-3", "--db", db_});
  EXPECT_EQ(r.status, 2);
  r = run({"show", "0", "--db", db_});
  EXPECT_EQ(r.status, 2);
  r = run({"show", "99999999999999999999999", "--db", db_});
  EXPECT_EQ(r.status, 2) << r.err;
  r = run({"show", "42", "--db", db_});
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(contains(r.err, "there is no case 42")) << r.err;
  r = run({"show", "--db", db_});
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(contains(r.err, "needs a case id")) << r.err;
  r = run({"show", "1", "--task", "gemm", "--db", db_});
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(contains(r.err, "does not take --task")) << r.err;
}

TEST_F(AgentMemoryCommand, ExportJsonHoldsEveryCase) {
  const Result r = run({"export", "--db", db_});
  ASSERT_EQ(r.status, 0) << r.err;
  const auto doc = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << r.out;
  EXPECT_EQ(doc["schemaVersion"], 2);
  ASSERT_EQ(doc["cases"].size(), 4u);  // no default limit for an export
  EXPECT_EQ(doc["cases"][0]["id"], 4);
  const auto& tiled = doc["cases"][2];
  EXPECT_EQ(tiled["action"], "tiling");
  EXPECT_EQ(tiled["predecessor"], 1);
  EXPECT_EQ(tiled["actionArgs"]["tile_m"], 128);
  EXPECT_EQ(tiled["speedRatio"], 2.0);
  EXPECT_EQ(tiled["source"], "def gemm_tiled():\n    return 1\n");
  EXPECT_TRUE(doc["cases"][3]["predecessor"].is_null());

  const Result filtered = run({"export", "--db", db_, "--task", "softmax"});
  EXPECT_EQ(nlohmann::json::parse(filtered.out)["cases"].size(), 1u);
}

TEST_F(AgentMemoryCommand, ExportMarkdownIsChronologicalWithSources) {
  const Result r = run({"export", "--db", db_, "--format", "md", "--task", "gemm"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.rfind("# Argus agent experience memory\n\n3 cases, oldest first.", 0), 0u) << r.out;
  const size_t first = r.out.find("## Case 1: gemm, baseline");
  const size_t second = r.out.find("## Case 2: gemm, tiling");
  ASSERT_NE(first, std::string::npos) << r.out;
  ASSERT_NE(second, std::string::npos) << r.out;
  EXPECT_LT(first, second);
  EXPECT_TRUE(contains(r.out, "```python\ndef gemm_tiled():\n    return 1\n```\n")) << r.out;
  EXPECT_TRUE(contains(r.out, "- verdict: invalid (did not compile)")) << r.out;
  EXPECT_FALSE(contains(r.out, "softmax")) << r.out;
}

TEST_F(AgentMemoryCommand, UsageErrors) {
  Result r = run({});
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(contains(r.err, "list, show or export")) << r.err;
  r = run({"forget"});
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(contains(r.err, "unknown subcommand 'forget'")) << r.err;
  r = run({"list", "--db", db_, "--colour"});
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(contains(r.err, "unknown option '--colour'")) << r.err;
  r = run({"list", "--db"});
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(contains(r.err, "--db needs a value")) << r.err;
  r = run({"list", "--db", db_, "--bucket", "great"});
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(contains(r.err, "unknown bucket 'great'")) << r.err;
  r = run({"list", "--db", db_, "--limit", "ten"});
  EXPECT_EQ(r.status, 2);
  r = run({"list", "--db", db_, "--format", "md"});
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(contains(r.err, "does not take --format")) << r.err;
  r = run({"export", "--db", db_, "--format", "xml"});
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(contains(r.err, "expected json or md")) << r.err;
  r = run({"list", "stray", "--db", db_});
  EXPECT_EQ(r.status, 2);
  r = run({"--help"});
  EXPECT_EQ(r.status, 0);
  EXPECT_TRUE(contains(r.out, "usage: argus-agent memory list")) << r.out;
}

TEST_F(AgentMemoryCommand, MissingDatabaseIsNotCreated) {
  const std::string missing = (dir_ / "nothing-here.db").string();
  for (const char* sub : {"list", "export"}) {
    const Result r = run({sub, "--db", missing});
    EXPECT_EQ(r.status, 1);
    EXPECT_TRUE(contains(r.err, "there is no experience memory at '" + missing + "' yet")) << r.err;
  }
  EXPECT_EQ(run({"show", "1", "--db", missing}).status, 1);
  EXPECT_FALSE(fs::exists(missing));
}

TEST_F(AgentMemoryCommand, UnreadableDatabaseIsAnError) {
  const std::string text = (dir_ / "notes.db").string();
  std::ofstream(text) << "plain words, not SQLite, and long enough to have a whole header in them.......\n";
  const Result r = run({"list", "--db", text});
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(contains(r.err, "not an experience memory database")) << r.err;
}

TEST_F(AgentMemoryCommand, DefaultPathComesFromTheEnvironment) {
  ::setenv("ARGUS_AGENT_MEMORY", db_.c_str(), 1);
  const Result r = run({"list"});
  ::unsetenv("ARGUS_AGENT_MEMORY");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "tiling")) << r.out;
}

}  // namespace
}  // namespace argus::agent

// The experience graph memory: SQLite store, outcome buckets, downstream score,
// retrieval, journal and the `memory` command.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "agent/memory.h"

namespace argus::agent {
namespace {

namespace fs = std::filesystem;

// A fresh directory per test, removed afterwards.
class TempDir {
 public:
  TempDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = fs::temp_directory_path() /
            ("argus_memory_" + std::string(info->test_suite_name()) + "_" + info->name() + "_" +
             std::to_string(::getpid()));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  fs::path path_;
};

std::unique_ptr<ExperienceMemory> openOrFail(const std::string& path) {
  std::string error;
  auto memory = ExperienceMemory::open(path, error);
  EXPECT_NE(memory, nullptr) << error;
  return memory;
}

Case makeCase(const std::string& task, const std::string& action, double reward,
              std::optional<int64_t> predecessor = std::nullopt, std::optional<double> ratio = 1.1) {
  Case c;
  c.predecessor = predecessor;
  c.runId = "run-1";
  c.task = task;
  c.action = action;
  c.compiled = c.correct = true;
  c.speedRatio = ratio;
  c.reward = reward;
  c.source = "def kernel():\n    pass\n";
  return c;
}

std::vector<int64_t> ids(const std::vector<Case>& cases) {
  std::vector<int64_t> out;
  for (const Case& c : cases) out.push_back(c.id);
  return out;
}

std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// Runs SQL on the database file directly, as a corrupted or foreign writer would.
void rawSql(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* message = nullptr;
  EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &message), SQLITE_OK) << (message ? message : "");
  sqlite3_free(message);
  sqlite3_close(db);
}

TEST(AgentMemoryBucket, Boundaries) {
  EXPECT_EQ(outcomeBucket(1.05, true), "effective");
  EXPECT_EQ(outcomeBucket(3.0, true), "effective");
  EXPECT_EQ(outcomeBucket(1.0499, true), "partial");
  EXPECT_EQ(outcomeBucket(1.0, true), "partial");
  EXPECT_EQ(outcomeBucket(0.9999, true), "ineffective");
  EXPECT_EQ(outcomeBucket(0.85, true), "ineffective");
  EXPECT_EQ(outcomeBucket(0.8499, true), "negative");
  EXPECT_EQ(outcomeBucket(0.0, true), "negative");
  EXPECT_EQ(outcomeBucket(std::nullopt, true), "baseline");
  EXPECT_EQ(outcomeBucket(1.5, false), "invalid");
  EXPECT_EQ(outcomeBucket(std::nullopt, false), "invalid");
}

TEST(AgentMemoryStore, PersistsEveryFieldAcrossInstances) {
  TempDir dir;
  const std::string path = dir.file("memory.db");
  Case c = makeCase("gemm_4096", "tiling", 0.75, std::nullopt, 1.25);
  c.taskFeatures = {{"op", "gemm"}, {"dtype", "f16"}, {"M", 4096}};
  c.stateHash = "abc123";
  c.actionArgs = {{"tile_m", 128}, {"tile_n", 64}};
  c.diagnosticCodes = {"A0102", "W0301"};
  c.diagnostics = nlohmann::json::array({{{"code", "A0102"}, {"message", "bank conflict"}}});
  c.correct = false;
  c.timeMs = 1.5;
  c.timeSource = "gpu";
  c.speedup = 2.5;
  c.confidence = 0.9;
  int64_t firstId = 0, secondId = 0;
  {
    auto memory = openOrFail(path);
    ASSERT_NE(memory, nullptr);
    firstId = memory->record(c);
    secondId = memory->record(makeCase("gemm_4096", "swizzle", 0.1, firstId));
  }
  EXPECT_EQ(firstId, 1);
  EXPECT_EQ(secondId, 2);
  auto reopened = openOrFail(path);
  ASSERT_NE(reopened, nullptr);
  const auto stored = reopened->get(firstId);
  ASSERT_TRUE(stored.has_value());
  EXPECT_EQ(stored->id, firstId);
  EXPECT_FALSE(stored->predecessor.has_value());
  EXPECT_EQ(stored->runId, "run-1");
  EXPECT_EQ(stored->task, "gemm_4096");
  EXPECT_EQ(stored->taskFeatures, c.taskFeatures);
  EXPECT_EQ(stored->stateHash, "abc123");
  EXPECT_EQ(stored->action, "tiling");
  EXPECT_EQ(stored->actionArgs, c.actionArgs);
  EXPECT_EQ(stored->diagnosticCodes, c.diagnosticCodes);
  EXPECT_EQ(stored->diagnostics, c.diagnostics);
  EXPECT_TRUE(stored->compiled);
  EXPECT_FALSE(stored->correct);
  EXPECT_EQ(stored->timeMs, 1.5);
  EXPECT_EQ(stored->timeSource, "gpu");
  EXPECT_EQ(stored->speedRatio, 1.25);
  EXPECT_EQ(stored->speedup, 2.5);
  EXPECT_EQ(stored->bucket, "invalid");  // filled in by record(): not correct
  EXPECT_DOUBLE_EQ(stored->confidence, 0.9);
  EXPECT_DOUBLE_EQ(stored->reward, 0.75);
  EXPECT_EQ(stored->source, c.source);
  EXPECT_EQ(stored->createdAt.size(), 24u) << stored->createdAt;  // 2026-11-29T20:57:03.123Z
  EXPECT_EQ(stored->createdAt.back(), 'Z');
  EXPECT_EQ(reopened->get(secondId)->predecessor, firstId);
  EXPECT_EQ(reopened->get(secondId)->bucket, "effective");
  EXPECT_FALSE(reopened->get(99).has_value());
  EXPECT_EQ(reopened->successors(firstId), std::vector<int64_t>{secondId});
  EXPECT_EQ(reopened->record(makeCase("t", "a", 0)), 3);  // ids keep counting after reopening
}

TEST(AgentMemoryStore, SchemaHasVersionIndexesAndEdgeView) {
  TempDir dir;
  const std::string path = dir.file("memory.db");
  {
    auto memory = openOrFail(path);
    ASSERT_NE(memory, nullptr);
    const int64_t root = memory->record(makeCase("t", "baseline", 0));
    memory->record(makeCase("t", "tiling", 1, root));
  }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  auto names = [&](const char* sql) {
    std::vector<std::string> out;
    sqlite3_stmt* stmt = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db, sql, -1, &stmt, nullptr), SQLITE_OK) << sql;
    while (sqlite3_step(stmt) == SQLITE_ROW)
      out.push_back(reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0)));
    sqlite3_finalize(stmt);
    return out;
  };
  EXPECT_EQ(names("SELECT version FROM schema_version"), std::vector<std::string>{"2"});
  const auto indexes = names("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'cases' ORDER BY name");
  for (const char* expected : {"cases_by_action", "cases_by_bucket", "cases_by_run", "cases_by_task"})
    EXPECT_NE(std::find(indexes.begin(), indexes.end(), expected), indexes.end()) << expected;
  EXPECT_EQ(names("SELECT parent_id || '->' || child_id FROM case_edges"), std::vector<std::string>{"1->2"});
  sqlite3_close(db);
}

TEST(AgentMemoryStore, KeepsValidationEvidenceAndMarksCasesFoundWrong) {
  TempDir dir;
  auto memory = openOrFail(dir.file("memory.db"));
  ASSERT_NE(memory, nullptr);
  Case good = makeCase("t", "llm:tiling", 0.8);
  good.stateHash = "00000000000000aa";
  good.verdict = "ok";
  good.evidence = {{"seed", "42"}, {"shapes", nlohmann::json::array({{{"role", "tiles"}, {"max_error", 0.01}}})}};
  const int64_t id = memory->record(good);
  Case wrong = makeCase("t", "llm:tiling", 0);
  wrong.correct = false;
  wrong.verdict = "wrong";
  wrong.verdictDetail = "C[0, 0]: got 0, want 1 at K=300 M=65 N=65 (stretched K shape, seed 7)";
  const int64_t wrongId = memory->record(wrong);
  std::optional<Case> back = memory->get(id);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->verdict, "ok");
  EXPECT_EQ(back->evidence["seed"], "42");
  EXPECT_EQ(back->evidence["shapes"][0]["role"], "tiles");
  EXPECT_EQ(back->invalidated, "");
  EXPECT_EQ(memory->get(wrongId)->verdictDetail, wrong.verdictDetail);

  EXPECT_EQ(memory->markWrong("00000000000000aa", "run 2: C[1, 0] differs at the tiles shape"), 1);
  back = memory->get(id);
  EXPECT_FALSE(back->correct);
  EXPECT_EQ(back->bucket, "invalid");
  EXPECT_EQ(back->reward, 0);
  EXPECT_EQ(back->invalidated, "run 2: C[1, 0] differs at the tiles shape");
  CaseFilter correct;
  correct.correct = true;
  EXPECT_TRUE(memory->find(correct).empty());  // replay and warm cases draw from correct ones only
  EXPECT_EQ(memory->markWrong("00000000000000aa", "again"), 0);  // nothing correct left to mark
  const nlohmann::json exported = caseToJson(*back);
  EXPECT_EQ(exported["invalidated"], back->invalidated);
  EXPECT_EQ(exported["evidence"]["seed"], "42");
}

TEST(AgentMemoryStore, UpgradesAVersionOneDatabase) {
  TempDir dir;
  const std::string path = dir.file("memory.db");
  // The version 1 table, as argus-agent created it before validation evidence.
  rawSql(path,
         "CREATE TABLE schema_version (version INTEGER NOT NULL);"
         "INSERT INTO schema_version (version) VALUES (1);"
         "CREATE TABLE cases (id INTEGER PRIMARY KEY AUTOINCREMENT, predecessor INTEGER, run_id TEXT NOT NULL,"
         " task TEXT NOT NULL, task_features TEXT NOT NULL, state_hash TEXT NOT NULL, action TEXT NOT NULL,"
         " action_args TEXT NOT NULL, diagnostic_codes TEXT NOT NULL, diagnostics TEXT NOT NULL,"
         " compiled INTEGER NOT NULL, correct INTEGER NOT NULL, time_ms REAL, time_source TEXT NOT NULL,"
         " speed_ratio REAL, speedup REAL, bucket TEXT NOT NULL, confidence REAL, reward REAL,"
         " source TEXT NOT NULL, created_at TEXT NOT NULL);"
         "INSERT INTO cases (run_id, task, task_features, state_hash, action, action_args, diagnostic_codes,"
         " diagnostics, compiled, correct, time_source, bucket, source, created_at) VALUES ('r', 't', '{}', 'h',"
         " 'baseline', '{}', '[]', '[]', 1, 1, 'model', 'baseline', 'src', 'then')");
  auto memory = openOrFail(path);
  ASSERT_NE(memory, nullptr);
  std::optional<Case> old = memory->get(1);
  ASSERT_TRUE(old);
  EXPECT_EQ(old->task, "t");
  EXPECT_EQ(old->verdict, "");
  EXPECT_TRUE(old->evidence.is_object() && old->evidence.empty());
  EXPECT_GT(memory->record(makeCase("t", "tiling", 1, 1)), 1);
  EXPECT_EQ(memory->exportJson({})["schemaVersion"], 2);
}

TEST(AgentMemoryStore, RefusesNewerSchemaAndForeignFiles) {
  TempDir dir;
  const std::string path = dir.file("memory.db");
  { ASSERT_NE(openOrFail(path), nullptr); }
  rawSql(path, "UPDATE schema_version SET version = 99");
  std::string error;
  EXPECT_EQ(ExperienceMemory::open(path, error), nullptr);
  EXPECT_NE(error.find("schema version 99"), std::string::npos) << error;
  EXPECT_NE(error.find("newer"), std::string::npos) << error;

  const std::string text = dir.file("notes.txt");
  std::ofstream(text) << "this is not a database, just some words long enough to fill a header.........\n";
  error.clear();
  EXPECT_EQ(ExperienceMemory::open(text, error), nullptr);
  EXPECT_NE(error.find("not an experience memory database"), std::string::npos) << error;

  const std::string other = dir.file("other.db");
  rawSql(other, "CREATE TABLE users (name TEXT)");
  error.clear();
  EXPECT_EQ(ExperienceMemory::open(other, error), nullptr);
  EXPECT_NE(error.find("something else"), std::string::npos) << error;

  error.clear();
  EXPECT_EQ(ExperienceMemory::open(dir.file("no/such/dir/memory.db"), error), nullptr);
  EXPECT_NE(error.find("cannot open"), std::string::npos) << error;
}

// The forest used by the score tests: 1 (r=1.0) has successors 2 (r=0.5) and
// 3 (r=-0.2); 2 has successor 4 (r=0.8).
struct ScoredGraph {
  std::unique_ptr<ExperienceMemory> memory = openOrFail(":memory:");
  int64_t one = 0, two = 0, three = 0, four = 0;
  ScoredGraph() {
    one = memory->record(makeCase("gemm", "baseline", 1.0, std::nullopt, std::nullopt));
    two = memory->record(makeCase("gemm", "tiling", 0.5, one, 1.2));
    three = memory->record(makeCase("gemm", "swizzle", -0.2, one, 0.8));
    four = memory->record(makeCase("gemm", "tiling", 0.8, two, 1.0));
  }
};

TEST(AgentMemoryScore, DownstreamScoreOnHandBuiltGraph) {
  ScoredGraph g;
  EXPECT_DOUBLE_EQ(g.memory->downstreamScore(g.four), 0.4);                 // 0.5 * 0.8
  EXPECT_DOUBLE_EQ(g.memory->downstreamScore(g.three), -0.1);               // 0.5 * -0.2
  EXPECT_DOUBLE_EQ(g.memory->downstreamScore(g.two), 0.25 + 0.35 * 0.4);    // 0.39
  EXPECT_DOUBLE_EQ(g.memory->downstreamScore(g.one), 0.5 + 0.35 * (0.39 - 0.1));  // 0.6015
  EXPECT_DOUBLE_EQ(g.memory->downstreamScore(12345), 0.0);
  EXPECT_EQ(g.memory->successors(g.one), (std::vector<int64_t>{g.two, g.three}));
  EXPECT_TRUE(g.memory->successors(g.four).empty());
}

TEST(AgentMemoryScore, CorruptedCycleTerminates) {
  TempDir dir;
  const std::string path = dir.file("memory.db");
  {
    auto memory = openOrFail(path);
    ASSERT_NE(memory, nullptr);
    const int64_t a = memory->record(makeCase("t", "x", 1.0));
    memory->record(makeCase("t", "y", 1.0, a));
    memory->record(makeCase("t", "z", 1.0));
  }
  rawSql(path, "UPDATE cases SET predecessor = 2 WHERE id = 1; UPDATE cases SET predecessor = 3 WHERE id = 3");
  auto memory = openOrFail(path);
  ASSERT_NE(memory, nullptr);
  // 1 -> 2 -> 1: the back edge adds nothing, so d(2) = 0.5 and d(1) = 0.5 + 0.35 * 0.5.
  EXPECT_DOUBLE_EQ(memory->downstreamScore(1), 0.675);
  EXPECT_DOUBLE_EQ(memory->downstreamScore(3), 0.5);  // a self loop
  EXPECT_EQ(memory->retrieve(CaseFilter{}).size(), 3u);
}

TEST(AgentMemoryStore, HandEditedJsonReadsBackAsEmpty) {
  TempDir dir;
  const std::string path = dir.file("memory.db");
  {
    auto memory = openOrFail(path);
    ASSERT_NE(memory, nullptr);
    memory->record(makeCase("t", "x", 1.0));
  }
  rawSql(path, "UPDATE cases SET task_features = '{not json', action_args = '[1,2]', "
               "diagnostic_codes = '[1, \"A0001\"]', diagnostics = 'oops'");
  auto memory = openOrFail(path);
  ASSERT_NE(memory, nullptr);
  const auto stored = memory->get(1);
  ASSERT_TRUE(stored.has_value());
  EXPECT_EQ(stored->taskFeatures, nlohmann::json::object());
  EXPECT_EQ(stored->actionArgs, nlohmann::json::array({1, 2}));  // valid JSON is kept as it is
  EXPECT_EQ(stored->diagnosticCodes, std::vector<std::string>{"A0001"});
  EXPECT_EQ(stored->diagnostics, nlohmann::json::array());
  CaseFilter byFeature;
  byFeature.featureKey = "dtype";
  EXPECT_TRUE(memory->find(byFeature).empty());
}

TEST(AgentMemoryScore, LongLineageDoesNotOverflow) {
  auto memory = openOrFail(":memory:");
  ASSERT_NE(memory, nullptr);
  std::optional<int64_t> previous;
  for (int i = 0; i < 20000; ++i) previous = memory->record(makeCase("t", "step", 1.0, previous));
  // A geometric series: 0.5 * (1 + 0.35 + 0.35^2 + ...) -> 0.5 / 0.65.
  EXPECT_NEAR(memory->downstreamScore(1), 0.5 / 0.65, 1e-9);
}

TEST(AgentMemoryRetrieve, RanksByDownstreamScoreAndLimits) {
  ScoredGraph g;
  CaseFilter all;
  all.task = "gemm";
  EXPECT_EQ(ids(g.memory->retrieve(all)), (std::vector<int64_t>{g.one, g.four, g.two, g.three}));
  all.limit = 2;
  EXPECT_EQ(ids(g.memory->retrieve(all)), (std::vector<int64_t>{g.one, g.four}));
  CaseFilter tiling;
  tiling.action = "tiling";
  EXPECT_EQ(ids(g.memory->retrieve(tiling)), (std::vector<int64_t>{g.four, g.two}));
}

TEST(AgentMemoryRetrieve, TiesKeepNewestFirst) {
  auto memory = openOrFail(":memory:");
  ASSERT_NE(memory, nullptr);
  for (int i = 0; i < 3; ++i) memory->record(makeCase("t", "a", 0.5));
  EXPECT_EQ(ids(memory->retrieve(CaseFilter{})), (std::vector<int64_t>{3, 2, 1}));
}

TEST(AgentMemoryFind, NewestFirstWithExactFilters) {
  auto memory = openOrFail(":memory:");
  ASSERT_NE(memory, nullptr);
  Case a = makeCase("gemm", "tiling", 1, std::nullopt, 1.2);
  a.taskFeatures = {{"dtype", "f16"}, {"M", 4096}};
  Case b = makeCase("gemm", "swizzle", 0, std::nullopt, 0.5);
  b.taskFeatures = {{"dtype", "f32"}};
  b.runId = "run-2";
  Case c = makeCase("softmax", "tiling", 0, std::nullopt, 1.0);
  c.correct = false;
  Case d = makeCase("gemm_big", "tiling", 0, std::nullopt, 1.2);  // "gemm" must not match it
  for (const Case& x : {a, b, c, d}) memory->record(x);

  EXPECT_EQ(ids(memory->find(CaseFilter{})), (std::vector<int64_t>{4, 3, 2, 1}));
  CaseFilter f;
  f.task = "gemm";
  EXPECT_EQ(ids(memory->find(f)), (std::vector<int64_t>{2, 1}));
  f = {};
  f.action = "tiling";
  EXPECT_EQ(ids(memory->find(f)), (std::vector<int64_t>{4, 3, 1}));
  f.bucket = "effective";
  EXPECT_EQ(ids(memory->find(f)), (std::vector<int64_t>{4, 1}));
  f = {};
  f.bucket = "invalid";
  EXPECT_EQ(ids(memory->find(f)), (std::vector<int64_t>{3}));
  f = {};
  f.runId = "run-2";
  EXPECT_EQ(ids(memory->find(f)), (std::vector<int64_t>{2}));
  f = {};
  f.correct = false;
  EXPECT_EQ(ids(memory->find(f)), (std::vector<int64_t>{3}));
  f = {};
  f.featureKey = "dtype";
  f.featureValue = "f16";
  EXPECT_EQ(ids(memory->find(f)), (std::vector<int64_t>{1}));
  f.featureKey = "M";
  f.featureValue = "4096";  // numbers compare as their text
  EXPECT_EQ(ids(memory->find(f)), (std::vector<int64_t>{1}));
  f.featureValue.reset();  // a key alone: cases that have it
  f.featureKey = "dtype";
  EXPECT_EQ(ids(memory->find(f)), (std::vector<int64_t>{2, 1}));
  f.limit = 1;
  EXPECT_EQ(ids(memory->find(f)), (std::vector<int64_t>{2}));
  f = {};
  f.limit = 2;
  EXPECT_EQ(ids(memory->find(f)), (std::vector<int64_t>{4, 3}));
  f.limit = 0;  // no limit
  EXPECT_EQ(memory->find(f).size(), 4u);
}

TEST(AgentMemoryStats, PerActionTriesRewardsAndBuckets) {
  ScoredGraph g;
  Case broken = makeCase("gemm", "swizzle", -1.0, g.one, std::nullopt);
  broken.compiled = false;
  g.memory->record(broken);  // id 5, d = -0.5
  CaseFilter filter;
  filter.limit = 1;  // statistics ignore the listing limit
  const auto stats = g.memory->actionStats(filter);
  ASSERT_EQ(stats.size(), 3u);
  EXPECT_EQ(stats[0].action, "baseline");
  EXPECT_EQ(stats[0].tries, 1);
  EXPECT_EQ(stats[1].action, "swizzle");
  EXPECT_EQ(stats[1].tries, 2);
  EXPECT_DOUBLE_EQ(stats[1].meanReward, -0.6);
  EXPECT_DOUBLE_EQ(stats[1].meanDownstream, (-0.1 - 0.5) / 2);
  EXPECT_EQ(stats[1].negative, 1);
  EXPECT_EQ(stats[1].invalid, 1);
  EXPECT_EQ(stats[2].action, "tiling");
  EXPECT_EQ(stats[2].tries, 2);
  EXPECT_DOUBLE_EQ(stats[2].meanReward, 0.65);
  EXPECT_DOUBLE_EQ(stats[2].meanDownstream, (0.39 + 0.4) / 2);
  EXPECT_EQ(stats[2].effective, 1);
  EXPECT_EQ(stats[2].partial, 1);
  CaseFilter onlyTiling;
  onlyTiling.action = "tiling";
  ASSERT_EQ(g.memory->actionStats(onlyTiling).size(), 1u);
}

TEST(AgentMemoryStore, InjectionLookingStringsAreStoredVerbatim) {
  TempDir dir;
  auto memory = openOrFail(dir.file("memory.db"));
  ASSERT_NE(memory, nullptr);
  const std::string evil = "x'); DROP TABLE cases; --";
  Case c = makeCase(evil, "a\" OR 1=1 --", 0.5);
  c.runId = "' OR '1'='1";
  c.source = "'; DELETE FROM cases WHERE '' = '";
  const int64_t id = memory->record(c);
  memory->record(makeCase("other", "b", 0.1));
  const auto stored = memory->get(id);
  ASSERT_TRUE(stored.has_value());
  EXPECT_EQ(stored->task, evil);
  EXPECT_EQ(stored->action, c.action);
  EXPECT_EQ(stored->runId, c.runId);
  EXPECT_EQ(stored->source, c.source);
  CaseFilter f;
  f.runId = "' OR '1'='1";
  EXPECT_EQ(ids(memory->find(f)), std::vector<int64_t>{id});
  f = {};
  f.task = evil;
  EXPECT_EQ(ids(memory->find(f)), std::vector<int64_t>{id});
  EXPECT_EQ(memory->find(CaseFilter{}).size(), 2u);
}

TEST(AgentMemoryStore, TwoInstancesShareOneFile) {
  TempDir dir;
  const std::string path = dir.file("memory.db");
  auto first = openOrFail(path);
  auto second = openOrFail(path);
  ASSERT_TRUE(first && second);
  const int64_t a = first->record(makeCase("t", "a", 0));
  const int64_t b = second->record(makeCase("t", "b", 0, a));
  EXPECT_NE(a, b);
  EXPECT_EQ(first->successors(a), std::vector<int64_t>{b});
  EXPECT_EQ(second->find(CaseFilter{}).size(), 2u);
}

TEST(AgentMemoryStore, BadTextAndNumbersDoNotThrow) {
  auto memory = openOrFail(":memory:");
  ASSERT_NE(memory, nullptr);
  Case c = makeCase("t", "a", std::nan(""));
  c.source = std::string("bad utf8 \xff\xfe here");
  c.actionArgs = {{"name", std::string("\xc3")}};
  c.timeMs = std::numeric_limits<double>::infinity();
  const int64_t id = memory->record(c);
  ASSERT_GT(id, 0);
  const auto stored = memory->get(id);
  ASSERT_TRUE(stored.has_value());
  EXPECT_EQ(stored->source, c.source);
  EXPECT_DOUBLE_EQ(stored->reward, 0.0);
  EXPECT_FALSE(stored->timeMs.has_value());
  EXPECT_NO_THROW(memory->exportJson(CaseFilter{}).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

TEST(AgentMemoryJournal, AppendsOneEntryPerCase) {
  TempDir dir;
  const std::string path = dir.file("memory.db");
  auto memory = openOrFail(path);
  ASSERT_NE(memory, nullptr);
  const int64_t root = memory->record(makeCase("gemm", "baseline", 0, std::nullopt, std::nullopt));
  Case c = makeCase("gemm", "tiling", 0.3, root, 1.2);
  c.actionArgs = {{"tile_m", 64}};
  c.diagnosticCodes = {"A0102", "W0301"};
  c.timeMs = 0.8125;
  c.timeSource = "model";
  c.speedup = 1.2;
  memory->record(c);
  const std::string journal = readFile(path + ".journal.md");
  EXPECT_EQ(journal.rfind("# Argus agent experience journal", 0), 0u) << journal;
  EXPECT_NE(journal.find("## Case 1: gemm, baseline"), std::string::npos) << journal;
  EXPECT_NE(journal.find("- predecessor: none (a starting point)"), std::string::npos) << journal;
  EXPECT_NE(journal.find("## Case 2: gemm, tiling"), std::string::npos) << journal;
  EXPECT_NE(journal.find("- action: tiling {\"tile_m\":64}"), std::string::npos) << journal;
  EXPECT_NE(journal.find("- predecessor: case 1"), std::string::npos) << journal;
  EXPECT_NE(journal.find("- verdict: effective (compiled, correct)"), std::string::npos) << journal;
  EXPECT_NE(journal.find("1.200x over the predecessor, 1.200x over the baseline; 0.8125 ms (model"),
            std::string::npos)
      << journal;
  EXPECT_NE(journal.find("- diagnostics: A0102, W0301"), std::string::npos) << journal;
  EXPECT_NE(journal.find("- time: 20"), std::string::npos) << journal;
  EXPECT_EQ(journal.find("def kernel"), std::string::npos) << "the journal stays short";
  // Reopening appends rather than starting over.
  memory.reset();
  openOrFail(path)->record(makeCase("gemm", "swizzle", 0, 2));
  const std::string after = readFile(path + ".journal.md");
  EXPECT_EQ(after.rfind(journal, 0), 0u);
  EXPECT_NE(after.find("## Case 3: gemm, swizzle"), std::string::npos);
  size_t titles = 0;
  for (size_t at = 0; (at = after.find("# Argus agent experience journal", at)) != std::string::npos; ++at) ++titles;
  EXPECT_EQ(titles, 1u);
}

}  // namespace
}  // namespace argus::agent

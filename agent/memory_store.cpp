// The experience memory kept in SQLite (docs/agent/memory.md has the schema
// and how it maps to PostgreSQL).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <map>
#include <mutex>
#include <unordered_map>
#include <unordered_set>

#include "agent/memory.h"
#include "agent/memory_internal.h"
#include "agent/memory_sqlite.h"

namespace argus::agent {
namespace {

using memory_detail::Statement;

// The columns in the order caseFromRow reads them (id first), and without id for INSERT.
#define ARGUS_CASE_FIELD_COLUMNS \
  "predecessor, run_id, task, task_features, state_hash, action, action_args, diagnostic_codes," \
  " diagnostics, compiled, correct, time_ms, time_source, speed_ratio, speedup, bucket, confidence," \
  " reward, source, created_at, verdict, verdict_detail, evidence, invalidated"
constexpr const char* kInsertColumns = ARGUS_CASE_FIELD_COLUMNS;
constexpr const char* kCaseColumns = "id, " ARGUS_CASE_FIELD_COLUMNS;
#undef ARGUS_CASE_FIELD_COLUMNS

nlohmann::json parseJsonOr(const std::string& text, nlohmann::json fallback) {
  nlohmann::json value = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  return value.is_discarded() ? fallback : value;
}

Case caseFromRow(const Statement& row) {
  Case c;
  c.id = row.int64(0);
  c.predecessor = row.optionalInt64(1);
  c.runId = row.text(2);
  c.task = row.text(3);
  c.taskFeatures = parseJsonOr(row.text(4), nlohmann::json::object());
  c.stateHash = row.text(5);
  c.action = row.text(6);
  c.actionArgs = parseJsonOr(row.text(7), nlohmann::json::object());
  for (const auto& code : parseJsonOr(row.text(8), nlohmann::json::array()))
    if (code.is_string()) c.diagnosticCodes.push_back(code.get<std::string>());
  c.diagnostics = parseJsonOr(row.text(9), nlohmann::json::array());
  c.compiled = row.int64(10) != 0;
  c.correct = row.int64(11) != 0;
  c.timeMs = row.optionalReal(12);
  c.timeSource = row.text(13);
  c.speedRatio = row.optionalReal(14);
  c.speedup = row.optionalReal(15);
  c.bucket = row.text(16);
  c.confidence = row.real(17);
  c.reward = row.real(18);
  c.source = row.text(19);
  c.createdAt = row.text(20);
  c.verdict = row.text(21);
  c.verdictDetail = row.text(22);
  c.evidence = parseJsonOr(row.text(23), nlohmann::json::object());
  c.invalidated = row.text(24);
  return c;
}

std::string nowIso8601() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  const auto millis =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char buffer[96];
  std::snprintf(buffer, sizeof buffer, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", utc.tm_year + 1900, utc.tm_mon + 1,
                utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec, static_cast<int>(millis));
  return buffer;
}

bool featureMatches(const Case& c, const CaseFilter& filter) {
  if (!filter.featureKey) return true;
  if (!c.taskFeatures.is_object()) return false;
  const auto it = c.taskFeatures.find(*filter.featureKey);
  if (it == c.taskFeatures.end()) return false;
  if (!filter.featureValue) return true;
  const std::string text = it->is_string() ? it->get<std::string>() : memory_detail::dumpJson(*it);
  return text == *filter.featureValue;
}

// d(v) over the stored forest, memoized across the calls of one operation.
class DownstreamScorer {
 public:
  explicit DownstreamScorer(sqlite3* db)
      : successors_(db, "SELECT id FROM cases WHERE predecessor = ?1 ORDER BY id"),
        reward_(db, "SELECT reward FROM cases WHERE id = ?1") {}

  double score(int64_t root) {
    if (const auto it = memo_.find(root); it != memo_.end()) return it->second;
    if (!reward(root)) return 0;  // no such case
    struct Frame {
      int64_t id;
      std::vector<int64_t> successors;
      size_t next = 0;
      double sum = 0;
    };
    // Iterative, so that a long lineage cannot overflow the stack.
    std::vector<Frame> stack;
    std::unordered_set<int64_t> onPath;
    auto push = [&](int64_t id) {
      onPath.insert(id);
      stack.push_back(Frame{id, successorsOf(id)});
    };
    push(root);
    while (!stack.empty()) {
      Frame& frame = stack.back();
      if (frame.next < frame.successors.size()) {
        const int64_t next = frame.successors[frame.next++];
        if (const auto it = memo_.find(next); it != memo_.end()) frame.sum += it->second;
        else if (!onPath.count(next)) push(next);
        // else: a cycle, only possible in a corrupted database; the back edge adds nothing.
        continue;
      }
      const double d = 0.5 * reward(frame.id).value_or(0) + 0.5 * 0.7 * frame.sum;
      memo_[frame.id] = d;
      onPath.erase(frame.id);
      stack.pop_back();
      if (!stack.empty()) stack.back().sum += d;
    }
    return memo_[root];
  }

 private:
  std::vector<int64_t> successorsOf(int64_t id) {
    std::vector<int64_t> ids;
    successors_.reset();
    successors_.bind(1, id);
    while (successors_.step() == SQLITE_ROW) ids.push_back(successors_.int64(0));
    return ids;
  }
  std::optional<double> reward(int64_t id) {
    reward_.reset();
    reward_.bind(1, id);
    if (reward_.step() != SQLITE_ROW) return std::nullopt;
    return reward_.isNull(0) ? 0.0 : reward_.real(0);
  }

  Statement successors_, reward_;
  std::unordered_map<int64_t, double> memo_;
};

class SqliteMemory final : public ExperienceMemory {
 public:
  SqliteMemory(sqlite3* db, std::string journalPath) : db_(db), journalPath_(std::move(journalPath)) {}
  ~SqliteMemory() override { sqlite3_close_v2(db_); }

  int64_t record(Case c) override {
    std::lock_guard lock(mutex_);
    c.createdAt = nowIso8601();
    if (c.bucket.empty()) c.bucket = outcomeBucket(c.speedRatio, c.compiled && c.correct);
    Statement insert(db_, std::string("INSERT INTO cases (") + kInsertColumns +
                              ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16,"
                              " ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24) RETURNING id");
    if (!insert.ok()) return 0;
    insert.bind(1, c.predecessor);
    insert.bind(2, c.runId);
    insert.bind(3, c.task);
    insert.bind(4, memory_detail::dumpJson(c.taskFeatures));
    insert.bind(5, c.stateHash);
    insert.bind(6, c.action);
    insert.bind(7, memory_detail::dumpJson(c.actionArgs));
    insert.bind(8, memory_detail::dumpJson(c.diagnosticCodes));
    insert.bind(9, memory_detail::dumpJson(c.diagnostics));
    insert.bind(10, static_cast<int64_t>(c.compiled));
    insert.bind(11, static_cast<int64_t>(c.correct));
    insert.bind(12, finite(c.timeMs));
    insert.bind(13, c.timeSource);
    insert.bind(14, finite(c.speedRatio));
    insert.bind(15, finite(c.speedup));
    insert.bind(16, c.bucket);
    insert.bind(17, finite(c.confidence).value_or(0));
    insert.bind(18, finite(c.reward).value_or(0));
    insert.bind(19, c.source);
    insert.bind(20, c.createdAt);
    insert.bind(21, c.verdict);
    insert.bind(22, c.verdictDetail);
    insert.bind(23, memory_detail::dumpJson(c.evidence));
    insert.bind(24, c.invalidated);
    if (insert.step() != SQLITE_ROW) return 0;
    c.id = insert.int64(0);
    insert.step();  // finishes the statement
    if (!journalPath_.empty()) memory_detail::appendJournalEntry(journalPath_, c);
    return c.id;
  }

  std::optional<Case> get(int64_t id) override {
    std::lock_guard lock(mutex_);
    Statement select(db_, std::string("SELECT ") + kCaseColumns + " FROM cases WHERE id = ?1");
    select.bind(1, id);
    if (select.step() != SQLITE_ROW) return std::nullopt;
    return caseFromRow(select);
  }

  std::vector<Case> find(const CaseFilter& filter) override {
    std::lock_guard lock(mutex_);
    return findUnlocked(filter, /*applyLimit=*/true);
  }

  std::vector<int64_t> successors(int64_t id) override {
    std::lock_guard lock(mutex_);
    std::vector<int64_t> ids;
    Statement select(db_, "SELECT id FROM cases WHERE predecessor = ?1 ORDER BY id");
    select.bind(1, id);
    while (select.step() == SQLITE_ROW) ids.push_back(select.int64(0));
    return ids;
  }

  double downstreamScore(int64_t id) override {
    std::lock_guard lock(mutex_);
    return DownstreamScorer(db_).score(id);
  }

  std::vector<Case> retrieve(const CaseFilter& filter) override {
    std::lock_guard lock(mutex_);
    std::vector<Case> cases = findUnlocked(filter, /*applyLimit=*/false);
    DownstreamScorer scorer(db_);
    std::vector<std::pair<double, size_t>> ranked;  // (score, position in newest-first order)
    for (size_t i = 0; i < cases.size(); ++i) ranked.emplace_back(scorer.score(cases[i].id), i);
    // Ties keep the newest first.
    std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    std::vector<Case> result;
    for (const auto& [score, index] : ranked) {
      if (filter.limit > 0 && result.size() >= static_cast<size_t>(filter.limit)) break;
      result.push_back(std::move(cases[index]));
    }
    return result;
  }

  std::vector<ActionStats> actionStats(const CaseFilter& filter) override {
    std::lock_guard lock(mutex_);
    // Statistics cover every Case passing the filter: `limit` is for listings.
    const std::vector<Case> cases = findUnlocked(filter, /*applyLimit=*/false);
    DownstreamScorer scorer(db_);
    std::map<std::string, ActionStats> byAction;
    for (const Case& c : cases) {
      ActionStats& stats = byAction[c.action];
      stats.action = c.action;
      ++stats.tries;
      stats.meanReward += c.reward;
      stats.meanDownstream += scorer.score(c.id);
      if (c.bucket == "effective") ++stats.effective;
      else if (c.bucket == "partial") ++stats.partial;
      else if (c.bucket == "ineffective") ++stats.ineffective;
      else if (c.bucket == "negative") ++stats.negative;
      else if (c.bucket == "invalid") ++stats.invalid;
    }
    std::vector<ActionStats> result;
    for (auto& [action, stats] : byAction) {
      stats.meanReward /= stats.tries;
      stats.meanDownstream /= stats.tries;
      result.push_back(stats);
    }
    return result;
  }

  int markWrong(const std::string& stateHash, const std::string& reason) override {
    std::lock_guard lock(mutex_);
    Statement update(db_, "UPDATE cases SET correct = 0, bucket = 'invalid', reward = 0, invalidated = ?1"
                          " WHERE state_hash = ?2 AND correct = 1");
    update.bind(1, reason.empty() ? std::string("found wrong") : reason);
    update.bind(2, stateHash);
    if (update.step() != SQLITE_DONE) return 0;
    return sqlite3_changes(db_);
  }

  nlohmann::json exportJson(const CaseFilter& filter) override {
    nlohmann::json cases = nlohmann::json::array();
    for (const Case& c : find(filter)) cases.push_back(caseToJson(c));
    return {{"schemaVersion", memory_detail::kSchemaVersion}, {"cases", std::move(cases)}};
  }

 private:
  static std::optional<double> finite(std::optional<double> value) {
    return value && std::isfinite(*value) ? value : std::nullopt;
  }

  std::vector<Case> findUnlocked(const CaseFilter& filter, bool applyLimit) {
    // Only fixed fragments are joined; every value is a bound parameter.
    std::string sql = std::string("SELECT ") + kCaseColumns + " FROM cases WHERE 1 = 1";
    std::vector<const std::string*> textValues;
    auto where = [&](const std::optional<std::string>& value, const char* column) {
      if (!value) return;
      textValues.push_back(&*value);
      sql += std::string(" AND ") + column + " = ?" + std::to_string(textValues.size());
    };
    where(filter.task, "task");
    where(filter.action, "action");
    where(filter.bucket, "bucket");
    where(filter.runId, "run_id");
    int next = static_cast<int>(textValues.size()) + 1;
    const int correctIndex = filter.correct ? next++ : 0;
    if (correctIndex) sql += " AND correct = ?" + std::to_string(correctIndex);
    sql += " ORDER BY id DESC";
    // The feature filter runs here, after SQL, so the limit must wait for it.
    const bool sqlLimit = applyLimit && filter.limit > 0 && !filter.featureKey;
    const int limitIndex = sqlLimit ? next++ : 0;
    if (sqlLimit) sql += " LIMIT ?" + std::to_string(limitIndex);

    Statement select(db_, sql);
    for (size_t i = 0; i < textValues.size(); ++i) select.bind(static_cast<int>(i) + 1, *textValues[i]);
    if (correctIndex) select.bind(correctIndex, static_cast<int64_t>(*filter.correct));
    if (limitIndex) select.bind(limitIndex, static_cast<int64_t>(filter.limit));
    std::vector<Case> cases;
    while (select.step() == SQLITE_ROW) {
      Case c = caseFromRow(select);
      if (!featureMatches(c, filter)) continue;
      cases.push_back(std::move(c));
      if (applyLimit && filter.limit > 0 && cases.size() >= static_cast<size_t>(filter.limit)) break;
    }
    return cases;
  }

  sqlite3* db_;
  std::string journalPath_;  // empty: no journal (an in-memory database)
  std::recursive_mutex mutex_;
};

}  // namespace

std::unique_ptr<ExperienceMemory> ExperienceMemory::open(const std::string& path, std::string& error) {
  if (path.empty()) {
    error = "no experience memory path given";
    return nullptr;
  }
  sqlite3* db = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX,
                                 nullptr);
  if (rc != SQLITE_OK) {
    error = "cannot open the experience memory '" + path + "': " + (db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
    sqlite3_close_v2(db);
    return nullptr;
  }
  // Another agent may hold the write lock for a moment: wait rather than fail.
  sqlite3_busy_timeout(db, 5000);
  if (!memory_detail::prepareSchema(db, path, error)) {
    sqlite3_close_v2(db);
    return nullptr;
  }
  const bool inMemory = path == ":memory:";
  return std::make_unique<SqliteMemory>(db, inMemory ? std::string() : memory_detail::journalPathFor(path));
}

}  // namespace argus::agent

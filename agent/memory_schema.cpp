// The experience memory's SQLite schema: creation, versioning and refusing
// files that are not ours (docs/agent/memory.md maps it to PostgreSQL).
#include <string>

#include "agent/memory_internal.h"
#include "agent/memory_sqlite.h"

namespace argus::agent::memory_detail {
namespace {

// Portable SQL only: INTEGER, REAL and TEXT columns, JSON kept as TEXT, no
// SQLite functions. The lineage is the predecessor column; case_edges shows
// it as an edge list.
constexpr const char* kSchemaStatements[] = {
    "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)",
    "CREATE TABLE IF NOT EXISTS cases ("
    " id INTEGER PRIMARY KEY AUTOINCREMENT,"
    " predecessor INTEGER,"
    " run_id TEXT NOT NULL,"
    " task TEXT NOT NULL,"
    " task_features TEXT NOT NULL,"
    " state_hash TEXT NOT NULL,"
    " action TEXT NOT NULL,"
    " action_args TEXT NOT NULL,"
    " diagnostic_codes TEXT NOT NULL,"
    " diagnostics TEXT NOT NULL,"
    " compiled INTEGER NOT NULL,"
    " correct INTEGER NOT NULL,"
    " time_ms REAL,"
    " time_source TEXT NOT NULL,"
    " speed_ratio REAL,"
    " speedup REAL,"
    " bucket TEXT NOT NULL,"
    " confidence REAL,"
    " reward REAL,"
    " source TEXT NOT NULL,"
    " created_at TEXT NOT NULL,"
    " verdict TEXT NOT NULL DEFAULT '',"
    " verdict_detail TEXT NOT NULL DEFAULT '',"
    " evidence TEXT NOT NULL DEFAULT '{}',"
    " invalidated TEXT NOT NULL DEFAULT '')",
    "CREATE INDEX IF NOT EXISTS cases_by_task ON cases (task)",
    "CREATE INDEX IF NOT EXISTS cases_by_action ON cases (action)",
    "CREATE INDEX IF NOT EXISTS cases_by_bucket ON cases (bucket)",
    "CREATE INDEX IF NOT EXISTS cases_by_run ON cases (run_id)",
    "CREATE INDEX IF NOT EXISTS cases_by_predecessor ON cases (predecessor)",
    "CREATE VIEW IF NOT EXISTS case_edges AS"
    " SELECT predecessor AS parent_id, id AS child_id FROM cases WHERE predecessor IS NOT NULL",
};

// Version 1 databases get the columns version 2 added (existing Cases keep
// empty values: they were validated at the task's shapes only).
constexpr const char* kUpgradeFrom1[] = {
    "ALTER TABLE cases ADD COLUMN verdict TEXT NOT NULL DEFAULT ''",
    "ALTER TABLE cases ADD COLUMN verdict_detail TEXT NOT NULL DEFAULT ''",
    "ALTER TABLE cases ADD COLUMN evidence TEXT NOT NULL DEFAULT '{}'",
    "ALTER TABLE cases ADD COLUMN invalidated TEXT NOT NULL DEFAULT ''",
    "UPDATE schema_version SET version = 2",
};

bool exec(sqlite3* db, const char* sql) { return sqlite3_exec(db, sql, nullptr, nullptr, nullptr) == SQLITE_OK; }

std::optional<int64_t> singleInteger(sqlite3* db, const char* sql) {
  Statement statement(db, sql);
  if (statement.step() != SQLITE_ROW || statement.isNull(0)) return std::nullopt;
  return statement.int64(0);
}

}  // namespace

bool prepareSchema(sqlite3* db, const std::string& path, std::string& error) {
  if (!exec(db, "BEGIN IMMEDIATE")) {
    const int code = sqlite3_errcode(db);
    error = code == SQLITE_NOTADB
                ? "'" + path + "' is not an experience memory database (it is not an SQLite file)"
                : "cannot use the experience memory '" + path + "': " + sqlite3_errmsg(db);
    return false;
  }
  auto fail = [&](std::string message) {
    exec(db, "ROLLBACK");
    error = std::move(message);
    return false;
  };
  const auto versionTables =
      singleInteger(db, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'");
  if (!versionTables) return fail("cannot read the experience memory '" + path + "': " + sqlite3_errmsg(db));
  if (*versionTables == 0) {
    const auto otherObjects =
        singleInteger(db, "SELECT count(*) FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'");
    if (otherObjects.value_or(0) > 0)
      return fail("'" + path +
                  "' is an SQLite database of something else (it has no schema_version table); "
                  "give the agent its own file with --db");
  } else {
    const auto version = singleInteger(db, "SELECT MAX(version) FROM schema_version");
    if (version && *version == 1)
      for (const char* statement : kUpgradeFrom1)
        if (!exec(db, statement))
          return fail("cannot upgrade the experience memory '" + path + "' to schema version 2: " + sqlite3_errmsg(db));
    if (version && *version > kSchemaVersion)
      return fail("the experience memory '" + path + "' has schema version " + std::to_string(*version) +
                  ", newer than this argus-agent understands (" + std::to_string(kSchemaVersion) +
                  "); use a newer argus-agent or another --db");
  }
  for (const char* statement : kSchemaStatements)
    if (!exec(db, statement))
      return fail("cannot create the experience memory schema in '" + path + "': " + sqlite3_errmsg(db));
  if (singleInteger(db, "SELECT count(*) FROM schema_version").value_or(0) == 0) {
    Statement insert(db, "INSERT INTO schema_version (version) VALUES (?1)");
    insert.bind(1, static_cast<int64_t>(kSchemaVersion));
    if (insert.step() != SQLITE_DONE) return fail("cannot record the schema version in '" + path + "'");
  }
  if (!exec(db, "COMMIT")) return fail("cannot create the experience memory '" + path + "': " + sqlite3_errmsg(db));
  return true;
}


}  // namespace argus::agent::memory_detail

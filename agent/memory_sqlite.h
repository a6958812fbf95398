// A thin owner of SQLite prepared statements for the experience memory: values
// are always bound as parameters, never spliced into SQL text.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <sqlite3.h>

namespace argus::agent::memory_detail {

class Statement {
 public:
  Statement(sqlite3* db, const std::string& sql) {
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt_, nullptr) != SQLITE_OK) stmt_ = nullptr;
  }
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  bool ok() const { return stmt_ != nullptr; }

  // Parameters are numbered from 1.
  void bind(int index, const std::string& value) {
    sqlite3_bind_text64(stmt_, index, value.data(), value.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
  }
  void bind(int index, int64_t value) { sqlite3_bind_int64(stmt_, index, value); }
  void bind(int index, double value) { sqlite3_bind_double(stmt_, index, value); }
  void bind(int index, const std::optional<double>& value) {
    if (value) bind(index, *value);
    else sqlite3_bind_null(stmt_, index);
  }
  void bind(int index, const std::optional<int64_t>& value) {
    if (value) bind(index, *value);
    else sqlite3_bind_null(stmt_, index);
  }

  // SQLITE_ROW, SQLITE_DONE or an error code.
  int step() { return stmt_ ? sqlite3_step(stmt_) : SQLITE_MISUSE; }
  void reset() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }

  // Columns are numbered from 0.
  bool isNull(int column) const { return sqlite3_column_type(stmt_, column) == SQLITE_NULL; }
  int64_t int64(int column) const { return sqlite3_column_int64(stmt_, column); }
  double real(int column) const { return sqlite3_column_double(stmt_, column); }
  std::string text(int column) const {
    const unsigned char* data = sqlite3_column_text(stmt_, column);
    if (!data) return {};
    return std::string(reinterpret_cast<const char*>(data), static_cast<size_t>(sqlite3_column_bytes(stmt_, column)));
  }
  std::optional<double> optionalReal(int column) const {
    return isNull(column) ? std::nullopt : std::optional<double>(real(column));
  }
  std::optional<int64_t> optionalInt64(int column) const {
    return isNull(column) ? std::nullopt : std::optional<int64_t>(int64(column));
  }

 private:
  sqlite3_stmt* stmt_ = nullptr;
};

// Creates the schema (in one transaction, as two agents may open a new file at
// once) or checks an existing one; false with `error` set for a database of a
// newer schema version, a file that is not SQLite, or an SQLite file of
// something else.
bool prepareSchema(sqlite3* db, const std::string& path, std::string& error);

}  // namespace argus::agent::memory_detail

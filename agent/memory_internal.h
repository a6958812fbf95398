// Pieces of the experience memory shared between its own files (the store, the
// journal and the `memory` command); not part of the agent's contract.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "agent/memory.h"

namespace argus::agent::memory_detail {

constexpr int kSchemaVersion = 2;  // 2: verdict, verdict_detail, evidence, invalidated

// The journal kept beside a file database.
std::string journalPathFor(const std::string& databasePath);

// One human-readable Markdown entry for `c` (the source program only when
// `withSource`, as the journal stays short and `memory export` is complete).
std::string formatMarkdownEntry(const Case& c, bool withSource);

// Appends the entry of `c` to the journal at `journalPath`, writing a title
// first when the file is new. False when the file cannot be written.
bool appendJournalEntry(const std::string& journalPath, const Case& c);

// JSON text that never throws: invalid UTF-8 is replaced rather than rejected.
std::string dumpJson(const nlohmann::json& value, int indent = -1);

// "1.234" style numbers for people; "-" when absent.
std::string formatNumber(std::optional<double> value, int precision = 3);

// "effective", "partial", ... "invalid" or "baseline": the buckets a filter may name.
bool isKnownBucket(const std::string& bucket);

}  // namespace argus::agent::memory_detail

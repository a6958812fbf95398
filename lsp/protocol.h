// The LSP protocol layer: plain structs for the parts of LSP 3.17 the server
// uses, JSON-RPC error codes, and conversions that never throw (a field of the
// wrong type is "absent", not an exception).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "support/source.h"

namespace argus::lsp {

using nlohmann::json;

namespace error_code {
constexpr int kParseError = -32700;
constexpr int kInvalidRequest = -32600;
constexpr int kMethodNotFound = -32601;
constexpr int kInvalidParams = -32602;
constexpr int kInternalError = -32603;
constexpr int kServerNotInitialized = -32002;
constexpr int kRequestCancelled = -32800;
constexpr int kContentModified = -32801;
}  // namespace error_code

// 0-based line, UTF-16 code units.
struct Position {
  uint32_t line = 0;
  uint32_t character = 0;
  bool operator==(const Position&) const = default;
};

struct Range {
  Position start, end;
  bool operator==(const Range&) const = default;
};

struct Location {
  std::string uri;
  Range range;
};

struct TextEdit {
  Range range;
  std::string newText;
};

// One change of didChange: a ranged (incremental) edit, or the whole text.
struct ContentChange {
  std::optional<Range> range;
  std::string text;
};

json toJson(const Position& position);
json toJson(const Range& range);
json toJson(const Location& location);
json toJson(const TextEdit& edit);

std::optional<Position> positionFromJson(const json& value);
std::optional<Range> rangeFromJson(const json& value);
std::optional<ContentChange> contentChangeFromJson(const json& value);

// Byte offsets <-> LSP positions within a source file (out-of-range positions clamp).
Position positionOf(const SourceFile& file, uint32_t offset);
Range rangeOf(const SourceFile& file, SourceRange range);
uint32_t offsetOf(const SourceFile& file, Position position);

// Safe field access for untrusted JSON.
const json* member(const json& object, const char* key);
std::optional<std::string> stringMember(const json& object, const char* key);
std::optional<int64_t> intMember(const json& object, const char* key);
// params.textDocument.uri
std::optional<std::string> documentUri(const json& params);

}  // namespace argus::lsp

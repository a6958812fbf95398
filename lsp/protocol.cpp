#include "lsp/protocol.h"

#include <algorithm>
#include <limits>

namespace argus::lsp {

json toJson(const Position& position) {
  return json{{"line", position.line}, {"character", position.character}};
}
json toJson(const Range& range) { return json{{"start", toJson(range.start)}, {"end", toJson(range.end)}}; }
json toJson(const Location& location) { return json{{"uri", location.uri}, {"range", toJson(location.range)}}; }
json toJson(const TextEdit& edit) { return json{{"range", toJson(edit.range)}, {"newText", edit.newText}}; }

const json* member(const json& object, const char* key) {
  if (!object.is_object()) return nullptr;
  auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

std::optional<std::string> stringMember(const json& object, const char* key) {
  const json* value = member(object, key);
  if (!value || !value->is_string()) return std::nullopt;
  return value->get<std::string>();
}

std::optional<int64_t> intMember(const json& object, const char* key) {
  const json* value = member(object, key);
  if (!value || !value->is_number_integer()) return std::nullopt;
  return value->get<int64_t>();
}

std::optional<std::string> documentUri(const json& params) {
  const json* document = member(params, "textDocument");
  return document ? stringMember(*document, "uri") : std::nullopt;
}

std::optional<Position> positionFromJson(const json& value) {
  std::optional<int64_t> line = intMember(value, "line"), character = intMember(value, "character");
  if (!line || !character || *line < 0 || *character < 0) return std::nullopt;
  constexpr int64_t kMax = std::numeric_limits<uint32_t>::max();
  return Position{static_cast<uint32_t>(std::min(*line, kMax)), static_cast<uint32_t>(std::min(*character, kMax))};
}

std::optional<Range> rangeFromJson(const json& value) {
  const json* start = member(value, "start");
  const json* end = member(value, "end");
  if (!start || !end) return std::nullopt;
  std::optional<Position> s = positionFromJson(*start), e = positionFromJson(*end);
  if (!s || !e) return std::nullopt;
  return Range{*s, *e};
}

std::optional<ContentChange> contentChangeFromJson(const json& value) {
  std::optional<std::string> text = stringMember(value, "text");
  if (!text) return std::nullopt;
  ContentChange change;
  change.text = std::move(*text);
  if (const json* range = member(value, "range")) {
    change.range = rangeFromJson(*range);
    if (!change.range) return std::nullopt;
  }
  return change;
}

Position positionOf(const SourceFile& file, uint32_t offset) {
  offset = std::min<uint32_t>(offset, static_cast<uint32_t>(file.text().size()));
  return Position{file.lineCol(offset).line - 1, file.utf16Column(offset)};
}

Range rangeOf(const SourceFile& file, SourceRange range) {
  return Range{positionOf(file, range.begin), positionOf(file, std::max(range.begin, range.end))};
}

uint32_t offsetOf(const SourceFile& file, Position position) {
  return file.offsetOfUtf16(position.line, position.character);
}

}  // namespace argus::lsp

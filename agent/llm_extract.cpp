// Finding the kernel in a model's reply: the last fenced code block (``` or
// ~~~, CommonMark rules) tagged python/py/ag/argus or untagged that contains
// "@kernel". Line endings are normalized to \n first.
#include <algorithm>
#include <optional>
#include <string_view>
#include <vector>

#include "agent/llm.h"

namespace argus::agent {
namespace {

std::vector<std::string> splitNormalizedLines(const std::string& text) {
  std::vector<std::string> lines;
  std::string current;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '\r' || c == '\n') {
      lines.push_back(std::move(current));
      current.clear();
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
    } else {
      current += c;
    }
  }
  lines.push_back(std::move(current));
  return lines;
}

struct Fence {
  char marker = 0;     // '`' or '~'
  size_t length = 0;   // at least 3
  size_t indent = 0;   // 0..3 spaces before the fence
  std::string language;
};

size_t leadingSpaces(std::string_view line) {
  size_t count = 0;
  while (count < line.size() && line[count] == ' ') ++count;
  return count;
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

std::optional<Fence> openingFence(std::string_view line) {
  Fence fence;
  fence.indent = leadingSpaces(line);
  if (fence.indent > 3 || fence.indent >= line.size()) return std::nullopt;
  char marker = line[fence.indent];
  if (marker != '`' && marker != '~') return std::nullopt;
  size_t end = fence.indent;
  while (end < line.size() && line[end] == marker) ++end;
  fence.marker = marker;
  fence.length = end - fence.indent;
  if (fence.length < 3) return std::nullopt;
  std::string_view info = trim(line.substr(end));
  if (marker == '`' && info.find('`') != std::string_view::npos) return std::nullopt;  // inline code
  std::string_view word = info.substr(0, info.find_first_of(" \t{"));
  for (char c : word) fence.language += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return fence;
}

bool closesFence(std::string_view line, const Fence& fence) {
  size_t indent = leadingSpaces(line);
  if (indent > 3) return false;
  size_t end = indent;
  while (end < line.size() && line[end] == fence.marker) ++end;
  return end - indent >= fence.length && trim(line.substr(end)).empty();
}

bool isKernelLanguage(const std::string& language) {
  return language.empty() || language == "python" || language == "py" || language == "python3" ||
         language == "ag" || language == "argus";
}

}  // namespace

std::optional<std::string> extractKernelSource(const std::string& reply) {
  std::vector<std::string> lines = splitNormalizedLines(reply);
  std::optional<std::string> lastKernel;
  for (size_t i = 0; i < lines.size(); ++i) {
    std::optional<Fence> fence = openingFence(lines[i]);
    if (!fence) continue;
    std::string block;
    size_t j = i + 1;
    // An unclosed fence runs to the end of the reply (a truncated answer still counts).
    for (; j < lines.size() && !closesFence(lines[j], *fence); ++j) {
      std::string_view line = lines[j];
      line.remove_prefix(std::min(leadingSpaces(line), fence->indent));
      block.append(line);
      block += '\n';
    }
    while (block.size() >= 2 && block[block.size() - 1] == '\n' && block[block.size() - 2] == '\n')
      block.pop_back();  // trailing blank lines carry nothing
    if (isKernelLanguage(fence->language) && block.find("@kernel") != std::string::npos)
      lastKernel = std::move(block);
    i = j;  // continue after the closing fence
  }
  return lastKernel;
}

}  // namespace argus::agent

// Scripted LSP conversations kept as files (tests/lsp/*.lsp), in the spirit of
// Carbon's LSP file tests:
//
//   # a comment
//   >>> {client message}          sent to the server, in order
//   <<< {expected server message} JSON may span lines until the next marker
//   !!! exit 0                    the server asked to exit, with this code
//
// The `<<<` messages after a group of consecutive `>>>` messages (a comment
// line ends a group) are what the server must send in answer to that group, in
// any order; a group without `<<<` lines expects nothing. In expected messages the string
// "<any>" matches any value. In client messages a string "@file:PATH" becomes
// the contents of PATH (relative to the source tree). With ARGUS_UPDATE_GOLDEN=1
// the expectations are rewritten from what the server sends.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "lsp_test_client.h"

namespace argus::lsp {
namespace {

using testing::readSourceFile;
using testing::TestClient;

struct Entry {
  enum Kind { Comment, Send, Expect, Exit } kind;
  std::string text;  // as written (JSON or comment line or exit code)
};

std::vector<Entry> parseScript(const std::string& content) {
  std::vector<Entry> entries;
  std::istringstream in(content);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(">>>", 0) == 0) entries.push_back({Entry::Send, line.substr(3)});
    else if (line.rfind("<<<", 0) == 0) entries.push_back({Entry::Expect, line.substr(3)});
    else if (line.rfind("!!! exit", 0) == 0) entries.push_back({Entry::Exit, line.substr(8)});
    else if (line.rfind("#", 0) == 0 || entries.empty() || entries.back().kind == Entry::Comment ||
             entries.back().kind == Entry::Exit)
      entries.push_back({Entry::Comment, line});
    else entries.back().text += "\n" + line;  // continuation of a JSON message
  }
  return entries;
}

void substituteFiles(json& value) {
  if (value.is_string()) {
    const std::string& s = value.get_ref<const std::string&>();
    if (s.rfind("@file:", 0) == 0) value = readSourceFile(s.substr(6));
  } else if (value.is_structured()) {
    for (json& child : value) substituteFiles(child);
  }
}

bool matches(const json& expected, const json& actual) {
  if (expected.is_string() && expected.get_ref<const std::string&>() == "<any>") return true;
  if (expected.type() != actual.type()) {
    return expected.is_number() && actual.is_number() && expected == actual;
  }
  if (expected.is_object()) {
    if (expected.size() != actual.size()) return false;
    for (auto it = expected.begin(); it != expected.end(); ++it)
      if (!actual.contains(it.key()) || !matches(*it, actual[it.key()])) return false;
    return true;
  }
  if (expected.is_array()) {
    if (expected.size() != actual.size()) return false;
    for (size_t i = 0; i < expected.size(); ++i)
      if (!matches(expected[i], actual[i])) return false;
    return true;
  }
  return expected == actual;
}

// Every expected message matched by a distinct actual one (greedy is enough:
// expectations in practice differ by id or method).
bool groupMatches(const std::vector<json>& expected, std::vector<json> actual) {
  if (expected.size() != actual.size()) return false;
  for (const json& e : expected) {
    auto it = std::find_if(actual.begin(), actual.end(), [&](const json& a) { return matches(e, a); });
    if (it == actual.end()) return false;
    actual.erase(it);
  }
  return true;
}

std::string describe(const std::vector<json>& messages) {
  std::string text;
  for (const json& m : messages) text += "  " + m.dump() + "\n";
  return text;
}

class Conversation {
 public:
  explicit Conversation(bool update) : update_(update), client_(std::chrono::milliseconds(50)) {}

  // Runs the script; returns the rewritten script (for update mode).
  std::string run(const std::vector<Entry>& entries, const std::string& name) {
    std::string out;
    size_t i = 0;
    while (i < entries.size()) {
      const Entry& entry = entries[i];
      if (entry.kind == Entry::Comment) {
        out += entry.text + "\n";
        ++i;
        continue;
      }
      if (entry.kind == Entry::Exit) {
        EXPECT_TRUE(client_.server().exitRequested()) << name << ": the server did not exit";
        EXPECT_EQ(client_.server().exitCode(), std::atoi(entry.text.c_str())) << name;
        out += "!!! exit" + entry.text + "\n";
        ++i;
        continue;
      }
      if (entry.kind == Entry::Expect) {
        ADD_FAILURE() << name << ": an expectation before any message was sent";
        ++i;
        continue;
      }
      // A group of sends, then the expectations that answer it.
      std::vector<json> sentIds;
      while (i < entries.size() && entries[i].kind == Entry::Send) {
        out += ">>>" + entries[i].text + "\n";
        json message = json::parse(entries[i].text, nullptr, false);
        if (message.is_discarded()) {
          client_.sendRaw(entries[i].text);  // deliberately malformed traffic
        } else {
          substituteFiles(message);
          if (message.contains("id")) sentIds.push_back(message["id"]);
          client_.send(message);
        }
        ++i;
      }
      std::vector<json> expected;
      std::vector<std::string> expectedText;
      while (i < entries.size() && entries[i].kind == Entry::Expect) {
        json e = json::parse(entries[i].text, nullptr, false);
        EXPECT_FALSE(e.is_discarded()) << name << ": bad expectation JSON: " << entries[i].text;
        expected.push_back(e);
        expectedText.push_back(entries[i].text);
        ++i;
      }
      std::vector<json> actual = collect(expected.size());
      bool ok = groupMatches(expected, actual);
      if (update_) {
        if (ok) {
          for (const std::string& t : expectedText) out += "<<<" + t + "\n";
        } else {
          sortForOutput(actual, sentIds);
          for (const json& m : actual) out += "<<< " + m.dump(2) + "\n";
        }
      } else {
        EXPECT_TRUE(ok) << name << ": after the message(s) ending at entry " << i << "\nexpected:\n"
                        << describe(expected) << "actual:\n" << describe(actual);
      }
    }
    if (!update_) {
      std::vector<json> extra = client_.drain(std::chrono::milliseconds(300));
      EXPECT_TRUE(extra.empty()) << name << ": unexpected messages at the end:\n" << describe(extra);
    }
    return out;
  }

 private:
  std::vector<json> collect(size_t count) {
    if (update_) return client_.drain(std::chrono::milliseconds(1000));
    std::vector<json> got;
    while (got.size() < count) {
      auto m = client_.waitFor([](const json&) { return true; }, std::chrono::seconds(30));
      if (!m) break;
      got.push_back(*m);
    }
    return got;
  }

  static void sortForOutput(std::vector<json>& messages, const std::vector<json>& sentIds) {
    auto rank = [&](const json& m) -> size_t {
      if (!m.contains("id")) return sentIds.size() + 1;
      auto it = std::find(sentIds.begin(), sentIds.end(), m["id"]);
      return static_cast<size_t>(it - sentIds.begin());
    };
    std::stable_sort(messages.begin(), messages.end(), [&](const json& a, const json& b) { return rank(a) < rank(b); });
  }

  bool update_;
  TestClient client_;
};

TEST(LspConversation, ScriptedFiles) {
  namespace fs = std::filesystem;
  fs::path dir = fs::path(ARGUS_SOURCE_DIR) / "tests" / "lsp";
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir))
    if (entry.path().extension() == ".lsp") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  ASSERT_FALSE(files.empty()) << "no conversation files in " << dir;
  const char* env = std::getenv("ARGUS_UPDATE_GOLDEN");
  bool update = env && std::string(env) == "1";
  for (const fs::path& file : files) {
    SCOPED_TRACE(file.filename().string());
    std::ifstream in(file, std::ios::binary);
    std::stringstream content;
    content << in.rdbuf();
    Conversation conversation(update);
    std::string rewritten = conversation.run(parseScript(content.str()), file.filename().string());
    if (update && rewritten != content.str()) std::ofstream(file, std::ios::binary) << rewritten;
  }
}

}  // namespace
}  // namespace argus::lsp

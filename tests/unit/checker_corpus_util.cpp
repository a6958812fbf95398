// Expectations of the checker corpus: parse, match, rewrite.
#include "checker_corpus_util.h"

#include <algorithm>
#include <fstream>
#include <regex>
#include <sstream>

#include "driver/compilation.h"
#include "test_sources.h"

namespace argus::corpus {

namespace {

const std::regex kCounterexampleRe(R"(#\s*expect-counterexample:\s*(.*)$)");
const std::regex kNoDiagnosticsRe(R"(^\s*#\s*expect-no-diagnostics\s*$)");
const std::regex kReplayRe(R"(#\s*replay:\s*(.*)$)");

// "key=value key2="quoted value" key3=a[1, 2]": values end at a space outside brackets and quotes.
std::vector<std::pair<std::string, std::string>> parseFields(const std::string& text) {
  std::vector<std::pair<std::string, std::string>> out;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && text[i] == ' ') ++i;
    size_t eq = text.find('=', i);
    if (i >= text.size() || eq == std::string::npos) break;
    std::string key = text.substr(i, eq - i);
    i = eq + 1;
    std::string value;
    if (i < text.size() && text[i] == '"') {
      size_t close = text.find('"', i + 1);
      if (close == std::string::npos) close = text.size();
      value = text.substr(i + 1, close - i - 1);
      i = close + 1;
    } else {
      int depth = 0;
      while (i < text.size() && (depth > 0 || text[i] != ' ')) {
        if (text[i] == '[' || text[i] == '(') ++depth;
        if (text[i] == ']' || text[i] == ')') --depth;
        value += text[i++];
      }
    }
    out.emplace_back(key, value);
  }
  return out;
}

std::string quoteIfNeeded(const std::string& value) {
  int depth = 0;
  for (char c : value) {
    if (c == '[' || c == '(') ++depth;
    if (c == ']' || c == ')') --depth;
    if (c == ' ' && depth == 0) return "\"" + value + "\"";
  }
  return value;
}

std::string iterationText(const Counterexample& cx) {
  std::string s;
  for (const auto& [name, v] : cx.iteration) s += (s.empty() ? "" : ",") + name + "=" + std::to_string(v);
  return s;
}

// The facts the corpus pins down (the others are prose for people).
const char* const kPinnedFacts[] = {"element", "offset", "launch", "bank", "replay", "total", "registers", "wait needed", "the copy"};

}  // namespace

std::string readFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool updateMode() {
  const char* v = std::getenv("ARGUS_UPDATE_CORPUS");
  return v && std::string(v) == "1";
}

std::vector<fs::path> corpusFiles() {
  std::vector<fs::path> out;
  fs::path root = fs::path(ARGUS_SOURCE_DIR) / "tests" / "checker";
  if (fs::exists(root))
    for (const auto& e : fs::directory_iterator(root))
      if (e.path().extension() == ".ag") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<fs::path> exampleFiles() {
  std::vector<fs::path> out;
  fs::path root = fs::path(ARGUS_SOURCE_DIR) / "examples";
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    if (e.path().extension() != ".ag") continue;
    fs::path rel = fs::relative(e.path(), root);
    if (rel.begin()->string() == "broken") continue;
    out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string caseName(const ::testing::TestParamInfo<fs::path>& info) {
  std::string name = info.param.parent_path().filename().string() + "_" + info.param.stem().string();
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

std::vector<Diagnostic> compileToPtx(const fs::path& path, const std::string& text) {
  CompileOptions options;
  if (std::string arch = argus::testing::exampleArch(text); !arch.empty()) options.arch = arch;
  Compilation c(SourceFile(path.filename().string(), text), options);
  c.ptx();
  return c.diagnostics();
}

std::vector<Expectation> parseExpectations(const std::string& text) {
  std::vector<Expectation> out;
  std::istringstream in(text);
  std::string line;
  uint32_t lineNo = 0;
  while (std::getline(in, line)) {
    ++lineNo;
    std::smatch m;
    if (std::regex_search(line, m, kCounterexampleRe)) {
      if (!out.empty()) {
        auto fields = parseFields(m[1]);
        out.back().counterexample.insert(out.back().counterexample.end(), fields.begin(), fields.end());
      }
      continue;
    }
    if (std::optional<Expectation> e = argus::testing::parseExpectationLine(line, lineNo)) out.push_back(*e);
  }
  return out;
}

Expectation fromDiagnostic(const Diagnostic& d, const SourceFile& file) { return argus::testing::expectationOf(d, file); }

bool sameDiagnostic(const Expectation& e, const Expectation& a) {
  if (e.severity != a.severity || e.code != a.code || e.line != a.line || e.message != a.message) return false;
  return !e.hasColumns || (e.col == a.col && e.endCol == a.endCol);
}

std::vector<std::pair<std::string, std::string>> counterexampleFields(const Diagnostic& d) {
  std::vector<std::pair<std::string, std::string>> out;
  if (!d.counterexample) return out;
  const Counterexample& cx = *d.counterexample;
  if (cx.thread) out.emplace_back("thread", std::to_string(*cx.thread));
  if (cx.warp) out.emplace_back("warp", std::to_string(*cx.warp));
  if (cx.lane) out.emplace_back("lane", std::to_string(*cx.lane));
  if (cx.value) out.emplace_back("value", std::to_string(*cx.value));
  if (cx.block) out.emplace_back("block", std::to_string(*cx.block));
  if (!cx.iteration.empty()) out.emplace_back("iteration", iterationText(cx));
  for (const char* name : kPinnedFacts)
    for (const auto& [key, value] : cx.facts)
      if (key == name) out.emplace_back(key, value);
  return out;
}

std::string counterexampleMismatch(const Expectation& expected, const Diagnostic& d) {
  if (expected.counterexample.empty()) return "";
  if (!d.counterexample) return "the diagnostic has no counterexample";
  std::vector<std::pair<std::string, std::string>> actual = counterexampleFields(d);
  // Facts the corpus does not pin by default may still be named.
  for (const auto& [key, value] : d.counterexample->facts) actual.emplace_back(key, value);
  std::string out;
  std::map<std::string, int> seen;  // a key named twice (two elements) matches its occurrences in order
  for (const auto& [key, value] : expected.counterexample) {
    int skip = seen[key]++;
    auto it = std::find_if(actual.begin(), actual.end(), [&](const auto& f) { return f.first == key && skip-- == 0; });
    if (it == actual.end())
      out += "counterexample has no '" + key + "' (expected '" + value + "'); ";
    else if (it->second != value)
      out += "counterexample " + key + " is '" + it->second + "', expected '" + value + "'; ";
  }
  return out;
}

void rewriteExpectations(const fs::path& path, const std::string& text, const std::vector<Diagnostic>& diags) {
  std::vector<std::string> lines;
  {
    std::istringstream in(text);
    std::string l;
    while (std::getline(in, l)) lines.push_back(l);
  }
  // Drop the old expectation lines, remembering where each kept line went.
  std::vector<int> newIndex(lines.size() + 2, 0);
  std::vector<std::string> kept;
  for (size_t i = 0; i < lines.size(); ++i) {
    newIndex[i + 1] = static_cast<int>(kept.size());
    std::smatch m;
    if (argus::testing::parseExpectationLine(lines[i], 1) || std::regex_search(lines[i], m, kCounterexampleRe) ||
        std::regex_search(lines[i], kNoDiagnosticsRe))
      continue;
    kept.push_back(lines[i]);
  }
  if (diags.empty()) {  // a clean kernel says so after its leading comment
    size_t at = 0;
    while (at < kept.size() && kept[at].rfind("#", 0) == 0) ++at;
    kept.insert(kept.begin() + static_cast<std::ptrdiff_t>(at), "# expect-no-diagnostics");
  }
  SourceFile file(path.filename().string(), text);
  std::map<int, std::vector<const Diagnostic*>> byLine;
  for (const Diagnostic& d : diags) {
    uint32_t line = file.lineCol(d.range.begin).line;
    byLine[newIndex[std::min<size_t>(line, lines.size())]].push_back(&d);
  }
  std::string out;
  for (int i = 0; i <= static_cast<int>(kept.size()); ++i) {
    if (auto it = byLine.find(i); it != byLine.end()) {
      std::string indent;
      if (i < static_cast<int>(kept.size())) {
        size_t first = kept[static_cast<size_t>(i)].find_first_not_of(' ');
        indent = kept[static_cast<size_t>(i)].substr(0, first == std::string::npos ? 0 : first);
      }
      // Each expectation is followed by its counterexample line; @+N counts the lines down to the statement.
      std::vector<std::string> block;
      for (const Diagnostic* d : it->second) {
        Expectation e = fromDiagnostic(*d, file);
        block.push_back(indent + "# expect-" + e.severity + "@+N:" + std::to_string(e.col) + "-" +
                        std::to_string(e.endCol) + " " + e.code + ": " + e.message);
        auto fields = counterexampleFields(*d);
        if (!fields.empty()) {
          std::string cx = indent + "# expect-counterexample:";
          for (const auto& [key, value] : fields) cx += " " + key + "=" + quoteIfNeeded(value);
          block.push_back(cx);
        }
      }
      // Replace @+N with the distance to the statement line.
      for (size_t j = 0; j < block.size(); ++j) {
        size_t at = block[j].find("@+N:");
        if (at != std::string::npos) block[j].replace(at, 4, "@+" + std::to_string(block.size() - j) + ":");
        out += block[j] + "\n";
      }
    }
    if (i < static_cast<int>(kept.size())) out += kept[static_cast<size_t>(i)] + "\n";
  }
  std::ofstream(path, std::ios::binary) << out;
}

bool expectsNoDiagnostics(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line))
    if (std::regex_search(line, kNoDiagnosticsRe)) return true;
  return false;
}

std::map<std::string, int64_t> replaySizes(const std::string& text) {
  std::map<std::string, int64_t> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::smatch m;
    if (!std::regex_search(line, m, kReplayRe)) continue;
    for (const auto& [key, value] : parseFields(m[1])) out[key] = std::stoll(value);
  }
  return out;
}

}  // namespace argus::corpus

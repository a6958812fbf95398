// `argus-agent memory list|show|export`: reading the experience memory.
// Exit status as argusc: 0 success, 1 the memory cannot be read or has no such
// case, 2 bad usage.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "agent/memory.h"
#include "agent/memory_internal.h"

namespace argus::agent {
namespace {

constexpr const char* kUsage = R"(usage: argus-agent memory list   [--db PATH] [filters] [--limit N]
       argus-agent memory show   ID [--db PATH]
       argus-agent memory export [--db PATH] [--format json|md] [filters] [--limit N]

Reads the agent's experience memory: every attempt (a case) with what it was
derived from, its outcome and its program.

options:
  --db PATH           the database (default: $ARGUS_AGENT_MEMORY, else ./argus-agent-memory.db)
  --task NAME         only cases of this task
  --action NAME       only cases of this knowledge-base action
  --bucket BUCKET     only this outcome: effective, partial, ineffective, negative, invalid, baseline
  --run ID            only cases of this agent run
  --feature KEY=VALUE only cases whose task feature KEY has this value
  --limit N           at most N cases, newest first (list: 50 by default; 0: all)
  --format json|md    export as JSON (default) or Markdown
  -h, --help          print this help
)";

struct Options {
  std::string subcommand;
  std::string dbPath;
  std::optional<std::string> caseId;
  std::string format = "json";
  bool formatGiven = false;
  CaseFilter filter;
};

struct UsageError {
  std::string message;
};

// Table cells and single-line fields: a newline or tab in a name must not break the layout.
std::string flat(const std::string& text) {
  std::string out = text;
  std::replace_if(out.begin(), out.end(), [](char ch) { return ch == '\n' || ch == '\r' || ch == '\t'; }, ' ');
  return out;
}

std::optional<int64_t> parseNonNegative(const std::string& text) {
  if (text.empty() || text.size() > 18 || !std::all_of(text.begin(), text.end(), [](char ch) { return ch >= '0' && ch <= '9'; }))
    return std::nullopt;
  return std::stoll(text);
}

std::string defaultDbPath() {
  const char* fromEnvironment = std::getenv("ARGUS_AGENT_MEMORY");
  return fromEnvironment && *fromEnvironment ? fromEnvironment : "argus-agent-memory.db";
}

// Fills `options` from the words after the subcommand; a UsageError says what is wrong.
std::optional<UsageError> parseOptions(const std::vector<std::string>& words, Options& options) {
  const bool isShow = options.subcommand == "show";
  for (size_t i = 0; i < words.size(); ++i) {
    std::string word = words[i];
    std::optional<std::string> inlineValue;
    if (word.rfind("--", 0) == 0) {
      if (const size_t eq = word.find('='); eq != std::string::npos) {
        inlineValue = word.substr(eq + 1);
        word = word.substr(0, eq);
      }
    }
    auto value = [&]() -> std::optional<std::string> {
      if (inlineValue) return inlineValue;
      if (i + 1 < words.size()) return words[++i];
      return std::nullopt;
    };
    if (word.empty() || word[0] != '-') {
      if (!isShow) return UsageError{"unexpected argument '" + word + "' for 'memory " + options.subcommand + "'"};
      if (options.caseId) return UsageError{"'memory show' takes one case id (got '" + *options.caseId + "' and '" + word + "')"};
      options.caseId = word;
      continue;
    }
    const bool isFilter = word == "--task" || word == "--action" || word == "--bucket" || word == "--run" ||
                          word == "--feature" || word == "--limit";
    const bool known = word == "--db" || isFilter || word == "--format";
    if (!known) return UsageError{"unknown option '" + word + "' for 'memory " + options.subcommand + "'"};
    if ((isShow && word != "--db") || (word == "--format" && options.subcommand != "export"))
      return UsageError{"'memory " + options.subcommand + "' does not take " + word};
    const auto given = value();
    if (!given) return UsageError{word + " needs a value"};
    if (word == "--db") options.dbPath = *given;
    else if (word == "--task") options.filter.task = *given;
    else if (word == "--action") options.filter.action = *given;
    else if (word == "--run") options.filter.runId = *given;
    else if (word == "--bucket") {
      if (!memory_detail::isKnownBucket(*given))
        return UsageError{"unknown bucket '" + *given +
                          "' (expected effective, partial, ineffective, negative, invalid or baseline)"};
      options.filter.bucket = *given;
    } else if (word == "--feature") {
      const size_t eq = given->find('=');
      if (eq == std::string::npos || eq == 0)
        return UsageError{"--feature expects KEY=VALUE (got '" + *given + "'), e.g. --feature dtype=f16"};
      options.filter.featureKey = given->substr(0, eq);
      options.filter.featureValue = given->substr(eq + 1);
    } else if (word == "--limit") {
      const auto limit = parseNonNegative(*given);
      if (!limit || *limit > 1000000000)
        return UsageError{"--limit expects a count of cases (got '" + *given + "'); 0 shows all"};
      options.filter.limit = static_cast<int>(*limit);
    } else if (word == "--format") {
      if (*given != "json" && *given != "md")
        return UsageError{"unknown export format '" + *given + "' (expected json or md)"};
      options.format = *given;
    }
  }
  if (isShow && !options.caseId) return UsageError{"'memory show' needs a case id, e.g. 'memory show 12'"};
  return std::nullopt;
}

std::string formatTable(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> widths;
  for (const auto& row : rows)
    for (size_t i = 0; i < row.size(); ++i) {
      if (widths.size() <= i) widths.push_back(0);
      widths[i] = std::max(widths[i], row[i].size());
    }
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i)
      line += row[i] + (i + 1 < row.size() ? std::string(widths[i] - row[i].size() + 2, ' ') : "");
    out += line + "\n";
  }
  return out;
}

// Every line of `text` (a final newline is implied) behind `prefix`.
std::string indented(const std::string& text, const std::string& prefix) {
  std::string out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    out += prefix + text.substr(start, end - start) + "\n";
    start = end + 1;
  }
  return out;
}

// A field for `show`: "-" rather than nothing when it was left empty.
std::string field(const std::string& text) { return text.empty() ? "-" : flat(text); }

int listCases(ExperienceMemory& memory, const Options& options, std::string& out) {
  const std::vector<Case> cases = memory.find(options.filter);
  const bool filtered = options.filter.task || options.filter.action || options.filter.bucket ||
                        options.filter.runId || options.filter.featureKey;
  if (cases.empty()) {
    out += filtered ? "no cases match these filters\n" : "the experience memory is empty\n";
    return 0;
  }
  std::vector<std::vector<std::string>> rows{{"id", "pred", "task", "action", "bucket", "speedup", "time ms"}};
  for (const Case& c : cases)
    rows.push_back({std::to_string(c.id), c.predecessor ? std::to_string(*c.predecessor) : "-", flat(c.task),
                    flat(c.action), flat(c.bucket), memory_detail::formatNumber(c.speedup),
                    memory_detail::formatNumber(c.timeMs, 4)});
  out += formatTable(rows);
  if (options.filter.limit > 0 && cases.size() == static_cast<size_t>(options.filter.limit))
    out += "(the newest " + std::to_string(cases.size()) + "; --limit 0 lists all)\n";
  return 0;
}

int showCase(ExperienceMemory& memory, const Options& options, const std::string& dbPath, std::string& out,
             std::string& err) {
  const auto id = parseNonNegative(*options.caseId);
  if (!id || *id == 0) {
    err += "argus-agent memory: '" + *options.caseId +
           "' is not a case id (ids are positive integers, as 'memory list' shows them)\n";
    return 2;
  }
  const auto found = memory.get(*id);
  if (!found) {
    err += "argus-agent memory: there is no case " + std::to_string(*id) + " in '" + dbPath +
           "' ('memory list' shows the cases there)\n";
    return 1;
  }
  const Case& c = *found;
  std::string successors;
  for (int64_t next : memory.successors(c.id)) successors += (successors.empty() ? "" : ", ") + std::to_string(next);
  std::vector<std::vector<std::string>> rows{
      {"predecessor:", c.predecessor ? std::to_string(*c.predecessor) : "none (a starting point)"},
      {"successors:", successors.empty() ? "none" : successors},
      {"downstream score:", memory_detail::formatNumber(memory.downstreamScore(c.id), 4)},
      {"run:", field(c.runId)},
      {"task:", field(c.task)},
      {"task features:", flat(memory_detail::dumpJson(c.taskFeatures))},
      {"state hash:", field(c.stateHash)},
      {"action:", field(c.action)},
      {"action args:", flat(memory_detail::dumpJson(c.actionArgs))},
      {"compiled:", c.compiled ? "yes" : "no"},
      {"correct:", c.correct ? "yes" : "no"},
      {"bucket:", field(c.bucket)},
      {"time ms:", memory_detail::formatNumber(c.timeMs, 4) + (c.timeSource.empty() ? "" : " (" + flat(c.timeSource) + ")")},
      {"speed ratio:", c.speedRatio ? memory_detail::formatNumber(c.speedRatio) + " (over the predecessor)" : "-"},
      {"speedup:", c.speedup ? memory_detail::formatNumber(c.speedup) + " (over the baseline)" : "-"},
      {"confidence:", memory_detail::formatNumber(c.confidence, 2)},
      {"reward:", memory_detail::formatNumber(c.reward, 4)},
      {"created:", field(c.createdAt)},
      {"diagnostic codes:", c.diagnosticCodes.empty() ? "none" : ""},
  };
  for (size_t i = 0; i < c.diagnosticCodes.size(); ++i)
    rows.back()[1] += (i ? ", " : "") + flat(c.diagnosticCodes[i]);
  out += "case " + std::to_string(c.id) + "\n";
  out += indented(formatTable(rows), "  ");
  out += "  diagnostics:\n";
  out += indented(memory_detail::dumpJson(c.diagnostics, 2), "    ");
  out += "source:\n" + c.source + (c.source.empty() || c.source.back() == '\n' ? "" : "\n");
  return 0;
}

int exportCases(ExperienceMemory& memory, const Options& options, std::string& out) {
  if (options.format == "json") {
    out += memory_detail::dumpJson(memory.exportJson(options.filter), 2) + "\n";
    return 0;
  }
  std::vector<Case> cases = memory.find(options.filter);
  std::reverse(cases.begin(), cases.end());  // Markdown reads in the order things happened
  out += "# Argus agent experience memory\n\n" + std::to_string(cases.size()) + " case" +
         (cases.size() == 1 ? "" : "s") + ", oldest first.\n\n";
  for (const Case& c : cases) out += memory_detail::formatMarkdownEntry(c, /*withSource=*/true);
  return 0;
}

}  // namespace

int runMemoryCommand(const std::vector<std::string>& args, std::string& out, std::string& err) {
  std::vector<std::string> words = args;
  if (!words.empty() && words.front() == "memory") words.erase(words.begin());  // callers may pass it or not
  auto usageError = [&](const std::string& message) {
    err += "argus-agent memory: " + message + "\nargus-agent memory: run 'argus-agent memory --help' for usage\n";
    return 2;
  };
  if (words.empty()) return usageError("which one: list, show or export?");
  if (std::find_if(words.begin(), words.end(), [](const std::string& w) { return w == "-h" || w == "--help"; }) !=
          words.end() ||
      words.front() == "help") {
    out += kUsage;
    return 0;
  }
  Options options;
  options.subcommand = words.front();
  if (options.subcommand != "list" && options.subcommand != "show" && options.subcommand != "export")
    return usageError("unknown subcommand '" + options.subcommand + "' (expected list, show or export)");
  if (options.subcommand == "export") options.filter.limit = 0;  // an export is complete unless limited
  if (const auto problem = parseOptions({words.begin() + 1, words.end()}, options))
    return usageError(problem->message);

  const std::string dbPath = options.dbPath.empty() ? defaultDbPath() : options.dbPath;
  std::error_code ec;
  // Reading must not create a database as a side effect.
  if (dbPath != ":memory:" && !std::filesystem::exists(dbPath, ec)) {
    err += "argus-agent memory: there is no experience memory at '" + dbPath +
           "' yet (the agent creates it on its first run; pass --db PATH or set ARGUS_AGENT_MEMORY to read another)\n";
    return 1;
  }
  std::string error;
  const auto memory = ExperienceMemory::open(dbPath, error);
  if (!memory) {
    err += "argus-agent memory: " + error + "\n";
    return 1;
  }
  if (options.subcommand == "list") return listCases(*memory, options, out);
  if (options.subcommand == "show") return showCase(*memory, options, dbPath, out, err);
  return exportCases(*memory, options, out);
}

}  // namespace argus::agent

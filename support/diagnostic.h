// One diagnostic structure for every stage and every consumer (CLI, LSP, agent).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "support/source.h"

namespace argus {

enum class Severity : uint8_t { Error, Warning, Note };

enum class DiagId : uint16_t {
#define DIAG(ID, CODE, SEV, FMT) ID,
#include "support/diagnostic_kinds.def"
#undef DIAG
  Count_
};

struct DiagKindInfo {
  DiagId id;
  const char* name;    // identifier, e.g. "UnknownName"
  const char* code;    // stable code, e.g. "AG3001"
  Severity severity;   // default severity
  const char* format;  // message format with {0}, {1}...
};

const DiagKindInfo& diagInfo(DiagId id);
const std::vector<DiagKindInfo>& allDiagKinds();
std::optional<DiagId> diagIdFromCode(std::string_view code);
const char* severityName(Severity s);
// Substitute {0}, {1}... in `format`.
std::string formatMessage(std::string_view format, const std::vector<std::string>& args);

// A labelled secondary range ("a_s declared here").
struct Label {
  SourceRange range;
  std::string message;
};

// A text edit that fixes the problem; `message` says what it does.
struct FixIt {
  SourceRange range;
  std::string replacement;
  std::string message;
};

// Structured counterexample (filled by the checker): where an invariant fails.
struct Counterexample {
  std::optional<int64_t> thread;      // block-local thread id
  std::optional<int64_t> warp, lane;  // derived from thread
  std::optional<int64_t> value;       // value (register) index within the thread
  std::optional<int64_t> block;       // linear block id, where it matters
  std::vector<std::pair<std::string, int64_t>> iteration;  // loop variable -> value
  std::vector<std::pair<std::string, std::string>> facts;  // named facts (element, tags found/expected)
  std::vector<Label> trace;           // program points that lead to the failure
};

struct Diagnostic {
  DiagId id = DiagId::SyntaxError;
  Severity severity = Severity::Error;
  SourceRange range;
  std::string message;
  std::vector<Label> labels;
  std::vector<std::string> notes;
  std::vector<FixIt> fixits;
  std::optional<Counterexample> counterexample;

  const char* code() const { return diagInfo(id).code; }
};

// Collects diagnostics in order. Never prints.
class DiagnosticSink {
 public:
  Diagnostic& report(DiagId id, SourceRange range, std::vector<std::string> args = {});
  const std::vector<Diagnostic>& diagnostics() const { return diags_; }
  std::vector<Diagnostic>& diagnostics() { return diags_; }
  bool hasErrors() const;
  size_t errorCount() const;
  void append(const std::vector<Diagnostic>& others);
  // Turn warnings into errors (-Werror).
  void promoteWarnings();

 private:
  std::vector<Diagnostic> diags_;
};

}  // namespace argus

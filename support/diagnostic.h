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
// Substitute {0}, {1}... (also written {0:name}...) in `format`.
std::string formatMessage(std::string_view format, const std::vector<std::string>& args);

// What a message argument is. A format writes {N} for a clause of prose and
// {N:name}, {N:int}, {N:type}, {N:shape} or {N:code} for a typed part (a name
// as the user wrote it, an integer, a type or dtype, a shape such as (64, 64),
// source text as written), so that renderers hand the parts on as structure (JSON
// `data.arguments`, SARIF `message.arguments`) and every report is checked
// against its format in the tests.
enum class DiagArgKind : uint8_t { Prose, Name, Integer, Type, Shape, Code };
const char* diagArgKindName(DiagArgKind kind);
// The kinds of {0}, {1}... in the format of `id`, in order.
const std::vector<DiagArgKind>& diagArgumentKinds(DiagId id);
// The format of `id` with each {N:kind} written {N} (SARIF's message strings).
std::string plainFormat(DiagId id);
// Why `args` do not fit the format of `id` (too few or too many, or a typed
// part that is not of its kind); nullopt when they fit.
std::optional<std::string> diagArgumentProblem(DiagId id, const std::vector<std::string>& args);
// The message of `id` with `args`, after handing any problem with the
// arguments to the installed check.
std::string formatDiagMessage(DiagId id, const std::vector<std::string>& args);
// Called for every report whose arguments do not fit its format. None is
// installed by default (a user still gets the message); the test binaries
// install one that fails the running test.
using DiagArgumentCheck = void (*)(DiagId id, const std::string& problem);
void setDiagArgumentCheck(DiagArgumentCheck check);

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
  // The arguments of the message, as reported (empty for a message built by other means).
  std::vector<std::string> arguments;

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

#include "support/diagnostic.h"

#include <algorithm>

namespace argus {

const std::vector<DiagKindInfo>& allDiagKinds() {
  static const std::vector<DiagKindInfo> kinds = {
#define DIAG(ID, CODE, SEV, FMT) {DiagId::ID, #ID, CODE, Severity::SEV, FMT},
#include "support/diagnostic_kinds.def"
#undef DIAG
  };
  return kinds;
}

const DiagKindInfo& diagInfo(DiagId id) { return allDiagKinds()[static_cast<size_t>(id)]; }

std::optional<DiagId> diagIdFromCode(std::string_view code) {
  for (const DiagKindInfo& k : allDiagKinds())
    if (code == k.code) return k.id;
  return std::nullopt;
}

const char* severityName(Severity s) {
  switch (s) {
    case Severity::Error: return "error";
    case Severity::Warning: return "warning";
    case Severity::Note: return "note";
  }
  return "error";
}

std::string formatMessage(std::string_view format, const std::vector<std::string>& args) {
  std::string out;
  for (size_t i = 0; i < format.size(); ++i) {
    if (format[i] == '{' && i + 2 < format.size() && format[i + 2] == '}' &&
        format[i + 1] >= '0' && format[i + 1] <= '9') {
      size_t n = static_cast<size_t>(format[i + 1] - '0');
      out += n < args.size() ? args[n] : std::string("?");
      i += 2;
    } else {
      out += format[i];
    }
  }
  return out;
}

Diagnostic& DiagnosticSink::report(DiagId id, SourceRange range, std::vector<std::string> args) {
  const DiagKindInfo& info = diagInfo(id);
  Diagnostic d;
  d.id = id;
  d.severity = info.severity;
  d.range = range;
  d.message = formatMessage(info.format, args);
  diags_.push_back(std::move(d));
  return diags_.back();
}

bool DiagnosticSink::hasErrors() const { return errorCount() > 0; }

size_t DiagnosticSink::errorCount() const {
  return static_cast<size_t>(std::count_if(diags_.begin(), diags_.end(), [](const Diagnostic& d) {
    return d.severity == Severity::Error;
  }));
}

void DiagnosticSink::append(const std::vector<Diagnostic>& others) {
  diags_.insert(diags_.end(), others.begin(), others.end());
}

void DiagnosticSink::promoteWarnings() {
  for (Diagnostic& d : diags_)
    if (d.severity == Severity::Warning) d.severity = Severity::Error;
}

}  // namespace argus

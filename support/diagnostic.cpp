#include "support/diagnostic.h"

#include <algorithm>
#include <atomic>
#include <cctype>

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

namespace {

// A placeholder at `at` ("{3}" or "{3:name}"): its number, kind name and length.
struct Placeholder {
  size_t number = 0;
  std::string_view kind;
  size_t length = 0;
};

std::optional<Placeholder> placeholderAt(std::string_view format, size_t at) {
  if (format[at] != '{') return std::nullopt;
  size_t i = at + 1;
  Placeholder p;
  size_t digits = 0;
  for (; i < format.size() && format[i] >= '0' && format[i] <= '9'; ++i, ++digits)
    p.number = p.number * 10 + static_cast<size_t>(format[i] - '0');
  if (digits == 0 || i >= format.size()) return std::nullopt;
  if (format[i] == ':') {
    size_t close = format.find('}', i);
    if (close == std::string_view::npos) return std::nullopt;
    p.kind = format.substr(i + 1, close - i - 1);
    i = close;
  }
  if (format[i] != '}') return std::nullopt;
  p.length = i + 1 - at;
  return p;
}

std::optional<DiagArgKind> kindNamed(std::string_view name) {
  if (name.empty()) return DiagArgKind::Prose;
  for (DiagArgKind k : {DiagArgKind::Name, DiagArgKind::Integer, DiagArgKind::Type, DiagArgKind::Shape, DiagArgKind::Code})
    if (name == diagArgKindName(k)) return k;
  return std::nullopt;
}

bool fitsKind(DiagArgKind kind, const std::string& text) {
  auto oneLine = [&] { return !text.empty() && text.find('\n') == std::string::npos; };
  switch (kind) {
    case DiagArgKind::Prose: return true;
    case DiagArgKind::Name:
      return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '@';
      });
    case DiagArgKind::Integer: {
      size_t start = !text.empty() && text[0] == '-' ? 1 : 0;
      return text.size() > start &&
             std::all_of(text.begin() + static_cast<std::ptrdiff_t>(start), text.end(),
                         [](char c) { return c >= '0' && c <= '9'; });
    }
    case DiagArgKind::Shape: return oneLine() && text.front() == '(' && text.back() == ')';
    case DiagArgKind::Type: return oneLine();
    case DiagArgKind::Code: return !text.empty();  // as written, line breaks included
  }
  return false;
}

std::atomic<DiagArgumentCheck> installedCheck{nullptr};

}  // namespace

const char* diagArgKindName(DiagArgKind kind) {
  switch (kind) {
    case DiagArgKind::Prose: return "prose";
    case DiagArgKind::Name: return "name";
    case DiagArgKind::Integer: return "int";
    case DiagArgKind::Type: return "type";
    case DiagArgKind::Shape: return "shape";
    case DiagArgKind::Code: return "code";
  }
  return "prose";
}

std::string formatMessage(std::string_view format, const std::vector<std::string>& args) {
  std::string out;
  for (size_t i = 0; i < format.size(); ++i) {
    if (std::optional<Placeholder> p = placeholderAt(format, i)) {
      out += p->number < args.size() ? args[p->number] : std::string("?");
      i += p->length - 1;
    } else {
      out += format[i];
    }
  }
  return out;
}

const std::vector<DiagArgKind>& diagArgumentKinds(DiagId id) {
  // Parsed once; a kind name the registry misspells reads as prose here and
  // fails DiagnosticFormats.ArgumentKindsAreKnown.
  static const std::vector<std::vector<DiagArgKind>> all = [] {
    std::vector<std::vector<DiagArgKind>> kinds;
    for (const DiagKindInfo& info : allDiagKinds()) {
      std::string_view format = info.format;
      std::vector<DiagArgKind> these;
      for (size_t i = 0; i < format.size(); ++i) {
        std::optional<Placeholder> p = placeholderAt(format, i);
        if (!p) continue;
        if (these.size() <= p->number) these.resize(p->number + 1, DiagArgKind::Prose);
        if (!p->kind.empty()) these[p->number] = kindNamed(p->kind).value_or(DiagArgKind::Prose);
        i += p->length - 1;
      }
      kinds.push_back(std::move(these));
    }
    return kinds;
  }();
  return all[static_cast<size_t>(id)];
}

std::string plainFormat(DiagId id) {
  std::string_view format = diagInfo(id).format;
  std::string out;
  for (size_t i = 0; i < format.size(); ++i) {
    if (std::optional<Placeholder> p = placeholderAt(format, i)) {
      out += "{" + std::to_string(p->number) + "}";
      i += p->length - 1;
    } else {
      out += format[i];
    }
  }
  return out;
}

std::optional<std::string> diagArgumentProblem(DiagId id, const std::vector<std::string>& args) {
  const std::vector<DiagArgKind>& kinds = diagArgumentKinds(id);
  const char* code = diagInfo(id).code;
  if (args.size() != kinds.size())
    return std::string(code) + " takes " + std::to_string(kinds.size()) + " argument(s), but " +
           std::to_string(args.size()) + " were given";
  for (size_t i = 0; i < kinds.size(); ++i)
    if (!fitsKind(kinds[i], args[i]))
      return std::string(code) + ": argument {" + std::to_string(i) + "} should be a " + diagArgKindName(kinds[i]) +
             ", but it is \"" + args[i] + "\"";
  return std::nullopt;
}

std::string formatDiagMessage(DiagId id, const std::vector<std::string>& args) {
  if (DiagArgumentCheck check = installedCheck.load(std::memory_order_relaxed))
    if (std::optional<std::string> problem = diagArgumentProblem(id, args)) check(id, *problem);
  return formatMessage(diagInfo(id).format, args);
}

void setDiagArgumentCheck(DiagArgumentCheck check) { installedCheck.store(check); }

Diagnostic& DiagnosticSink::report(DiagId id, SourceRange range, std::vector<std::string> args) {
  const DiagKindInfo& info = diagInfo(id);
  Diagnostic d;
  d.id = id;
  d.severity = info.severity;
  d.range = range;
  d.message = formatDiagMessage(id, args);
  d.arguments = std::move(args);
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

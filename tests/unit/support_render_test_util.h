// Diagnostics for the renderer tests: one reported through the registry, and
// one with a message of the test's own (what the renderers get; the registry's
// formats are tested in support_diagnostic_formats_test.cpp).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "support/diagnostic.h"

namespace argus::testing {

inline Diagnostic make(DiagId id, SourceRange range, std::vector<std::string> args) {
  DiagnosticSink sink;
  return sink.report(id, range, std::move(args));
}

inline Diagnostic withMessage(DiagId id, SourceRange range, std::string message) {
  Diagnostic d;
  d.id = id;
  d.severity = diagInfo(id).severity;
  d.range = range;
  d.message = std::move(message);
  return d;
}

}  // namespace argus::testing

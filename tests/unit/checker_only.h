// Test helper: sema, then only the checker, so that the diagnostics a test
// looks at are the checker's (code generation never runs).
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "checker/checker.h"
#include "driver/compilation.h"

namespace argus::testing {

struct Checked {
  std::unique_ptr<Compilation> compilation;
  DiagnosticSink diags;
};

inline std::unique_ptr<Checked> checkOnly(const std::string& source, const std::string& fileName = "test.ag") {
  auto out = std::make_unique<Checked>();
  out->compilation = std::make_unique<Compilation>(SourceFile(fileName, source), CompileOptions{});
  const ir::Module& module = out->compilation->ir();
  EXPECT_FALSE(out->compilation->hasErrors()) << "the test kernel must pass sema\n" << source;
  checker::check(module, out->diags, &out->compilation->source());
  return out;
}

// "CODE: message" per diagnostic, for failure messages.
inline std::string describe(const DiagnosticSink& diags) {
  std::string s;
  for (const Diagnostic& d : diags.diagnostics()) s += std::string(d.code()) + ": " + d.message + "\n";
  return s;
}

inline std::vector<const Diagnostic*> withCode(const DiagnosticSink& diags, const char* code) {
  std::vector<const Diagnostic*> out;
  for (const Diagnostic& d : diags.diagnostics())
    if (std::string(d.code()) == code) out.push_back(&d);
  return out;
}

}  // namespace argus::testing

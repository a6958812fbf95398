// Helpers for the sema unit tests: parse + analyze a source string.
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "frontend/parser.h"
#include "frontend/sema.h"
#include "ir/ir.h"

namespace argus::testing {

struct Analysis {
  std::unique_ptr<SourceFile> file;
  std::unique_ptr<ast::Module> ast;
  DiagnosticSink diags;
  sema::Result result;

  const ir::Function* kernel(const std::string& name) const {
    for (const auto& fn : result.module->functions)
      if (fn->name == name) return fn.get();
    return nullptr;
  }
  std::string diagText() const {
    std::string out;
    for (const Diagnostic& d : diags.diagnostics()) {
      LineCol lc = file->lineCol(d.range.begin);
      out += std::to_string(lc.line) + ":" + std::to_string(lc.column) + " " + d.code() + ": " + d.message + "\n";
    }
    return out;
  }
  const Diagnostic* find(const std::string& code) const {
    for (const Diagnostic& d : diags.diagnostics())
      if (code == d.code()) return &d;
    return nullptr;
  }
};

inline std::unique_ptr<Analysis> analyzeSource(const std::string& text, sema::Options options = {},
                                               const std::string& name = "test.ag") {
  auto a = std::make_unique<Analysis>();
  a->file = std::make_unique<SourceFile>(name, text);
  a->ast = parseModule(*a->file, a->diags);
  a->result = sema::analyze(*a->ast, *a->file, options, a->diags);
  return a;
}

inline std::string readSourceFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Counts ops of a kind anywhere in a block (regions included).
inline int countOps(const ir::Block& block, ir::OpKind kind) {
  int n = 0;
  for (const auto& op : block.ops) {
    if (op->kind == kind) ++n;
    for (const ir::Block& r : op->regions) n += countOps(r, kind);
  }
  return n;
}

}  // namespace argus::testing

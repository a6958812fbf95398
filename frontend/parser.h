// The Argus parser: source text in, our own AST (frontend/ast.h) out.
#pragma once

#include <memory>

#include "frontend/ast.h"
#include "support/diagnostic.h"
#include "support/source.h"

namespace argus {

// Always returns a Module, whatever the input. Lexical and syntax errors are
// reported to `diags` (AG1xxx), at most one per logical line and never a
// cascade; the parts that could not be understood become ErrorStmt/ErrorExpr,
// and functions that contain an error are marked `hasSyntaxErrors`.
std::unique_ptr<ast::Module> parseModule(const SourceFile& file, DiagnosticSink& diags);

}  // namespace argus

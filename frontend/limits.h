// Limits on how deeply a program may nest. Every stage of the compiler (the
// ANTLR parser, the AST builder, sema, the IR passes, the checker, codegen,
// the interpreter) and every client of the AST (the language server) walks
// these structures recursively; the limits keep that recursion bounded by a
// constant rather than by the size of the input, so no input exhausts the
// stack. A program over a limit gets AG1014 (docs/diagnostics/AG1014.md) at
// the construct that crossed it, and the construct becomes an Error node.
//
// The values are far above what a kernel needs and far below what the stack
// allows (measured with tests/fuzz/gen_deep_inputs.py under AddressSanitizer:
// bench/results/fuzzing.md).
#pragma once

#include <cstddef>

namespace argus::frontend {

// Nesting of one expression in the AST: each operator of a chain (`a * b * c`
// is `(a * b) * c`), each attribute access, call, subscript, bracket and unary
// operator adds a level.
inline constexpr size_t kMaxExpressionDepth = 256;

// Rule invocations of the (recursive) ANTLR parser within one statement:
// brackets, calls, subscripts, unary operators and `**` each add one or two.
// Left-associative chains (`a * b * c`, `x.y.z`) are loops there, not recursion.
inline constexpr size_t kMaxParseDepth = 600;

// Blocks nested inside each other in one function (an `if`, `elif`, `else`,
// `for` or `while` body each adds a level; an `elif` is a block inside the
// `if` before it). Sema applies the same limit to the loops and runtime `if`s
// around a statement after @device functions are inlined, which is the
// nesting of the Tile IR's regions.
inline constexpr size_t kMaxBlockDepth = 200;

// @device functions calling each other (each call is inlined).
inline constexpr size_t kMaxDeviceCallDepth = 64;

// Expressions and statements that sema is inside of at once, across inlined
// @device calls: the limits above bound one function, this one the sum over a
// chain of calls (a deep expression in a deep block in a device function
// called from one more). Above the others, so only the sum can reach it.
inline constexpr size_t kMaxAnalysisDepth = 600;

}  // namespace argus::frontend

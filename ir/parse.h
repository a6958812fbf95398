// Reads the textual Tile IR that ir::print writes (`--emit=ir`, `argusc opt`) back into a
// module, so that passes and the checker can be run and tested on IR text. Each parsed op's
// source range is its line in that text (indentation and a trailing `// line:col` left out),
// so diagnostics about parsed IR point into the IR file. The result is verified
// (ir::verify); the first problem, syntax or verification, is the error.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "ir/ir.h"

namespace argus::ir {

struct IrParseResult {
  std::unique_ptr<Module> module;  // null on error
  std::string error;               // "line L, column C: what was expected"
};

IrParseResult parseIr(std::string_view text);

// Reads a layout as ir::print writes it ("#mma<[64, 64], warps=[2, 2]>", "#blocked<[4, 1024],
// reduced=[1]>", "#wgmma<[64, 128], warpgroups=1>"); `error` says what was expected.
struct LayoutParseResult {
  bool ok = false;
  Layout layout;
  std::string error;
};
LayoutParseResult parseLayoutText(std::string_view text);

}  // namespace argus::ir

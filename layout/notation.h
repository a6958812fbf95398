// Parser of CuTe's notation and of layout expressions (the language of
// `argusc layout`): integers and nested tuples `(2,(3,4))` (CuTe's static
// `_2` is accepted), layouts `shape:stride`, tilers `<4:1, 8:2>`, swizzles
// `Swizzle<3,3,3>` / `Sw<3,3,3>`, composition `A o B` (with a swizzle on the
// left: `Sw<3,3,3> o 0 o (8,64):(64,1)`), calls `name(arg, ...)`, and
// evaluation at a coordinate `L(1,2)`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "layout/int_tuple.h"

namespace argus::layout {

// A range of the expression text, [begin, end) in bytes (0-based columns).
struct TextRange {
  size_t begin = 0, end = 0;
};

struct ExpressionError {
  std::string message;
  TextRange range;
};

struct ExprNode {
  enum class Kind {
    Tuple,    // an IntTuple literal (an integer is a leaf)
    Layout,   // shape:stride literal
    Tiler,    // <a, b, ...>
    Swizzle,  // Swizzle<B,M,S>
    Word,     // a bare name: bf16, f32, ...
    Call,     // name(args)
    Compose,  // children[0] o children[1]
    Apply,    // children[0](children[1...]): evaluation at a coordinate
  };
  Kind kind = Kind::Tuple;
  TextRange range;
  IntTuple shape, stride;      // Tuple (shape), Layout (both)
  int swizzle[3] = {0, 0, 0};  // Swizzle
  std::string name;            // Word, Call
  std::vector<ExprNode> children;
};

using ParseResult = std::variant<ExprNode, ExpressionError>;

ParseResult parseExpression(std::string_view text);

}  // namespace argus::layout

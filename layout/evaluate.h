// Evaluation of layout expressions (see notation.h) into values: integers and
// tuples, layouts, tilers, swizzles, composed (swizzled) layouts and
// thread-value layouts. Used by `argusc layout` and by tests; sema and the
// checker call the algebra directly.
#pragma once

#include <string>
#include <string_view>
#include <variant>

#include "layout/algebra.h"
#include "layout/notation.h"
#include "layout/swizzle.h"
#include "layout/tv_layout.h"

namespace argus::layout {

struct Word {
  std::string name;
};

using Value = std::variant<IntTuple, Layout, Tiler, Swizzle, ComposedLayout, TVLayout, Word>;

using EvalResult = std::variant<Value, ExpressionError>;

// Parses and evaluates; errors carry the range of the offending sub-expression.
EvalResult evaluateExpression(std::string_view text);

// Parses CuTe notation for one layout, e.g. "(2,(3,4)):(1,(2,6))" or "8:1"
// (a bare shape gets compact column-major strides).
Result<Layout> parseLayout(std::string_view text);

// CuTe's notation for any value (`(2,3):(1,2)`, `Sw<3,3,3> o 0 o 8:1`, `<4:1,8:2>`).
std::string toString(const Value& value);
std::string toString(const Tiler& tiler);

}  // namespace argus::layout

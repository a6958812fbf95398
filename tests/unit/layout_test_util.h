// Shared helpers of the layout algebra tests.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "layout/algebra.h"
#include "layout/evaluate.h"

namespace argus::layout::testing {

// Parses CuTe notation; fails the test (and returns 1:0) on a parse error.
inline Layout L(const std::string& text) {
  Result<Layout> parsed = parseLayout(text);
  EXPECT_TRUE(parsed.ok()) << text << ": " << (parsed ? "" : parsed.error().message);
  return parsed ? *parsed : Layout();
}

// Evaluates an expression and prints the value in CuTe's notation, or "error: ...".
inline std::string eval(const std::string& text) {
  EvalResult result = evaluateExpression(text);
  if (auto* error = std::get_if<ExpressionError>(&result)) return "error: " + error->message;
  return toString(std::get<Value>(result));
}

inline std::string str(const Result<Layout>& result) {
  return result ? toString(*result) : "error: " + result.error().message;
}

}  // namespace argus::layout::testing

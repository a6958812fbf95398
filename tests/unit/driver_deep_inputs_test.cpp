// Inputs whose structure is as deep as they are long: chains of operators and
// attribute accesses, nested brackets, blocks and @device calls, 10,000 to
// 100,000 terms. Each used to crash argusc and argus-lsp (stack overflow in
// the AST builder, sema or the AST's destructor) or was refused with a
// misleading syntax error; now each compiles through sema, the checker and
// code generation with AG1014 at the construct that crossed a limit of
// frontend/limits.h, and a program just under each limit compiles to PTX.
// tests/fuzz/gen_deep_inputs.py writes the same inputs as files.
#include <gtest/gtest.h>
#include <pthread.h>

#include <functional>
#include <string>
#include <vector>

#include "driver/compilation.h"
#include "frontend/limits.h"

namespace argus {
namespace {

const char* const kHead =
    "@kernel(grid=(1,), warps=4)\n"
    "def k(x: Tensor[f32, (N,)], out: Tensor[f32, (N,)], BLOCK: const = 128):\n"
    "    require(N <= BLOCK, \"one block writes all of out\")\n"
    "    t = load(x.tile((BLOCK,))[0])\n"
    "    i = program_id(0)\n";
const char* const kTail = "    out.tile((BLOCK,))[0] = t\n";

std::string kernel(const std::string& body) { return kHead + body + kTail; }

std::string repeat(const std::string& s, size_t n) {
  std::string out;
  out.reserve(s.size() * n);
  for (size_t i = 0; i < n; ++i) out += s;
  return out;
}

std::string chain(const std::string& operand, const std::string& op, size_t terms) {
  return operand + repeat(" " + op + " " + operand, terms - 1);
}

struct Outcome {
  std::vector<Diagnostic> nesting;  // AG1014
  size_t errors = 0;
  bool ptx = false;
};

// The whole pipeline, as argusc runs it.
Outcome compile(std::string text) {
  CompileOptions options;
  Compilation c(SourceFile("deep.ag", std::move(text)), options);
  Outcome out;
  out.ptx = !c.ptx().empty();
  for (const Diagnostic& d : c.diagnostics()) {
    if (d.id == DiagId::NestingTooDeep) out.nesting.push_back(d);
    if (d.severity == Severity::Error) ++out.errors;
  }
  return out;
}

void expectOneNestingError(const std::string& text, const std::string& message, const std::string& label) {
  Outcome out = compile(text);
  ASSERT_EQ(out.nesting.size(), 1u) << label;
  EXPECT_EQ(out.nesting[0].message, message) << label;
  EXPECT_FALSE(out.nesting[0].notes.empty()) << label;
  EXPECT_FALSE(out.ptx) << label;
}

const std::string kExpressionTooDeep = "this expression is nested too deeply (the limit is 256 levels)";
const std::string kStatementTooDeep = "this statement is nested too deeply (the limit is 600 levels for the parser)";

struct Operator {
  const char* spelling;
  const char* operand;  // a float tile or an int scalar, so that sema types the chain
};
const Operator kChainOperators[] = {
    {"+", "t"}, {"-", "t"}, {"*", "t"}, {"/", "t"}, {"@", "t"}, {"//", "i"}, {"%", "i"}, {"<<", "i"},
    {">>", "i"}, {"&", "i"}, {"|", "i"}, {"^", "i"}, {"==", "i"}, {"!=", "i"}, {"<", "i"}, {"<=", "i"},
    {">", "i"}, {">=", "i"}, {"and", "i"}, {"or", "i"}};

TEST(DeepInputs, EveryLeftAssociativeChainIsOneErrorNotACrash) {
  for (size_t terms : {10000u, 100000u}) {
    for (const Operator& op : kChainOperators) {
      std::string line = std::string("    j = ") + chain(op.operand, op.spelling, terms) + "\n";
      Outcome out = compile(kernel(line));
      std::string label = std::string(op.spelling) + " x" + std::to_string(terms);
      ASSERT_EQ(out.nesting.size(), 1u) << label;
      EXPECT_EQ(out.nesting[0].message, kExpressionTooDeep) << label;
      // The whole expression, from its first operand to its last.
      EXPECT_EQ(out.nesting[0].range.begin, std::string(kHead).size() + 8) << label;
      EXPECT_EQ(out.nesting[0].range.end, std::string(kHead).size() + line.size() - 1) << label;
    }
  }
}

TEST(DeepInputs, RightAssociativePowerAndPrefixChainsStopInTheParser) {
  for (size_t terms : {10000u, 100000u}) {
    expectOneNestingError(kernel("    j = " + chain("i", "**", terms) + "\n"), kStatementTooDeep, "**");
    expectOneNestingError(kernel("    t = " + repeat("- ", terms) + "t\n"), kStatementTooDeep, "unary -");
    expectOneNestingError(kernel("    j = " + repeat("~", terms) + "i\n"), kStatementTooDeep, "unary ~");
    expectOneNestingError(kernel("    j = " + repeat("not ", terms) + "i\n"), kStatementTooDeep, "not");
  }
}

TEST(DeepInputs, PostfixChainsAreOneError) {
  for (size_t terms : {10000u, 100000u}) {
    expectOneNestingError(kernel("    j = x" + repeat(".shape", terms) + "\n"), kExpressionTooDeep, "attributes");
    expectOneNestingError(kernel("    j = program_id" + repeat("(0)", terms) + "\n"), kExpressionTooDeep, "calls");
    expectOneNestingError(kernel("    j = x" + repeat("[0]", terms) + "\n"), kExpressionTooDeep, "subscripts");
  }
}

TEST(DeepInputs, NestedBracketsAndCallsStopInTheParser) {
  for (size_t depth : {10000u, 100000u}) {
    expectOneNestingError(kernel("    t = " + repeat("(", depth) + "t" + repeat(")", depth) + "\n"), kStatementTooDeep, "()");
    expectOneNestingError(kernel("    j = " + repeat("[", depth) + "0" + repeat("]", depth) + "\n"), kStatementTooDeep, "[]");
    expectOneNestingError(kernel("    t = " + repeat("exp2(", depth) + "t" + repeat(")", depth) + "\n"), kStatementTooDeep,
                          "calls");
    expectOneNestingError(kernel("    j = " + repeat("x.shape[", depth) + "0" + repeat("]", depth) + "\n"),
                          kStatementTooDeep, "subscripts");
  }
}

TEST(DeepInputs, ExpressionsJustUnderTheLimitCompileToPtx) {
  // 255 multiplications: 256 levels with the outermost.
  Outcome out = compile(kernel("    t = " + chain("t", "*", frontend::kMaxExpressionDepth) + "\n"));
  EXPECT_EQ(out.errors, 0u);
  EXPECT_TRUE(out.ptx);
  out = compile(kernel("    t = " + chain("t", "*", frontend::kMaxExpressionDepth + 1) + "\n"));
  EXPECT_EQ(out.nesting.size(), 1u);
  // 150 nested brackets around a call: deep for the parser, under its limit.
  out = compile(kernel("    t = " + repeat("(", 150) + "exp2(t)" + repeat(")", 150) + "\n"));
  EXPECT_EQ(out.errors, 0u);
  EXPECT_TRUE(out.ptx);
}

std::string nestedIfs(size_t levels) {
  std::string body;
  for (size_t k = 0; k < levels; ++k) body += std::string(4 + k, ' ') + "if i == 0:\n";
  return body + std::string(4 + levels, ' ') + "t = t + 1.0\n";
}

TEST(DeepInputs, NestedBlocksStopAtTheLimit) {
  Outcome out = compile(kernel(nestedIfs(frontend::kMaxBlockDepth)));
  EXPECT_EQ(out.errors, 0u);
  EXPECT_TRUE(out.ptx);
  for (size_t levels : {frontend::kMaxBlockDepth + 1, size_t{3000}}) {
    out = compile(kernel(nestedIfs(levels)));
    ASSERT_EQ(out.nesting.size(), 1u) << levels;
    EXPECT_EQ(out.nesting[0].message, "the body of this 'if' is nested too deeply (the limit is 200 nested blocks)");
  }
  std::string fors;
  for (size_t k = 0; k < 3000; ++k) fors += std::string(4 + k, ' ') + "for v" + std::to_string(k) + " in range(2):\n";
  fors += std::string(3004, ' ') + "t = t + 1.0\n";
  expectOneNestingError(kernel(fors), "the body of this 'for' is nested too deeply (the limit is 200 nested blocks)", "for");
}

TEST(DeepInputs, ElifChainsCountAsNestedBlocks) {
  std::string ok = "    if i == 0:\n        pass\n" + repeat("    elif i == 1:\n        pass\n", 150);
  Outcome out = compile(kernel(ok));
  EXPECT_EQ(out.errors, 0u);
  EXPECT_TRUE(out.ptx);
  for (size_t n : {10000u, 100000u}) {
    expectOneNestingError(kernel("    if i == 0:\n        pass\n" + repeat("    elif i == 1:\n        pass\n", n) +
                                 "    else:\n        pass\n"),
                          "this 'elif' is nested too deeply (the limit is 200 nested blocks)", "elif");
  }
}

std::string deviceChain(size_t n) {
  std::string text;
  for (size_t k = 0; k < n; ++k)
    text += "@device\ndef d" + std::to_string(k) + "(v):\n    return d" + std::to_string(k + 1) + "(v)\n\n";
  text += "@device\ndef d" + std::to_string(n) + "(v):\n    return v\n\n";
  return text + kernel("    t = d0(t)\n");
}

TEST(DeepInputs, DeviceCallChainsStopAtTheLimit) {
  Outcome out = compile(deviceChain(frontend::kMaxDeviceCallDepth - 1));
  EXPECT_EQ(out.errors, 0u);
  EXPECT_TRUE(out.ptx);
  for (size_t n : {size_t{frontend::kMaxDeviceCallDepth}, size_t{10000}}) {
    out = compile(deviceChain(n));
    ASSERT_EQ(out.nesting.size(), 1u) << n;
    EXPECT_EQ(out.nesting[0].message, "this call of 'd" + std::to_string(frontend::kMaxDeviceCallDepth) +
                                          "' is nested too deeply (the limit is 64 @device calls inside each other)");
  }
}

TEST(DeepInputs, DeepFunctionsSumUpAcrossDeviceCalls) {
  // Each device function alone is within every limit; the chain of them is not.
  std::string text;
  const size_t functions = 20;
  for (size_t k = 0; k < functions; ++k) {
    text += "@device\ndef d" + std::to_string(k) + "(v):\n";
    std::string call = k + 1 < functions ? "d" + std::to_string(k + 1) + "(v)" : "v";
    // The call is the innermost operand: the chain is 40 levels deep above it.
    text += "    return " + call + repeat(" + v", 40) + "\n\n";
  }
  Outcome out = compile(text + kernel("    t = d0(t)\n"));
  ASSERT_GE(out.nesting.size(), 1u);
  EXPECT_NE(out.nesting[0].message.find("across the @device calls"), std::string::npos) << out.nesting[0].message;
}

// Runs `body` on a thread with a small stack: recursion along a chain as long
// as the input overflows it at once instead of only on larger inputs.
void onSmallStack(size_t bytes, const std::function<void()>& body) {
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, bytes);
  pthread_t thread;
  auto trampoline = [](void* arg) -> void* {
    (*static_cast<const std::function<void()>*>(arg))();
    return nullptr;
  };
  ASSERT_EQ(pthread_create(&thread, &attr, trampoline, const_cast<std::function<void()>*>(&body)), 0);
  pthread_join(thread, nullptr);
  pthread_attr_destroy(&attr);
}

TEST(DeepInputs, DependentScalarChainsNeedNoStackProportionalToTheirLength) {
  // 10,000 statements, each using the last one's value, then an index built
  // from all of them: the checker's Z3 encodings of `j` used to recurse once
  // per statement (a crash on a 512 KiB stack, and on the main thread's 8 MiB
  // at 100,000 statements).
  for (const char* step : {"j = j * 3 + i", "j = j ^ i"}) {
    std::string body = "    j = i\n" + repeat("    " + std::string(step) + "\n", 10000) +
                       "    t = load(x.tile((BLOCK,))[j % 4])\n";
    Outcome out;
    onSmallStack(512 * 1024, [&] { out = compile(kernel(body)); });
    EXPECT_EQ(out.errors, 0u) << step;
    EXPECT_TRUE(out.ptx) << step;
  }
}

}  // namespace
}  // namespace argus

// The parser on valid input: every statement and expression form, operator
// precedence, exact ranges, expression ids, and the agreement of the fast
// path with the recovering parser.
#include <gtest/gtest.h>

#include <set>

#include "frontend/parser_internal.h"
#include "frontend_parser_test_util.h"

namespace argus {
namespace {

using testing::Parsed;
using testing::parseText;
using testing::sexpr;

const char* kGemm = R"(@kernel(grid=(cdiv(M, BM), cdiv(N, BN)), warps=4)
def gemm(A: Tensor[f32, (M, K)], B: Tensor[f32, (K, N)], C: Tensor[f32, (M, N)],
         BM: const = 64, BN: const = 64, BK: const = 16):
    a_s = shared(f32, (BM, BK))
    b_s = shared(f32, (BK, BN))
    acc = zeros(f32, (BM, BN))
    for kt in range(cdiv(K, BK)):
        copy(a_s, A.tile((BM, BK))[program_id(0), kt])
        copy(b_s, B.tile((BK, BN))[kt, program_id(1)])
        barrier()
        acc = dot(a_s, b_s, acc)
        barrier()
    C.tile((BM, BN))[program_id(0), program_id(1)] = acc

@device
def gelu(v):
    return 0.5 * v * (1.0 + erf(v * 0.7071067811865476))
)";

// A file with every statement and expression form.
const char* kAllForms = R"(@kernel(grid=(cdiv(N, 128),), warps=4)
def everything(x: Tensor[f32, (N,)], s: f32, BLOCK: const = 128) -> None:
    a = b = 1
    p, q = q, p
    (r, t) = 1, 2
    y: f32 = 2.5
    y += 1
    y -= 1
    y *= 2
    y /= 2
    n //= 2
    n %= 3
    n **= 2
    m @= m
    n &= 1
    n |= 2
    n ^= 3
    n <<= 1
    n >>= 1
    for i in range(0, 10, 2):
        if i == 0:
            continue
        elif i < 4:
            break
        elif not i:
            pass
        else:
            i = -i
    while n > 0 and n != 7 or False:
        n = n - 1
    assert a.origin.col == b.origin.row, "same K"
    assert ok
    t = x[1:2, ::2, :, 3:, :4, i]
    u = [1, 2.0, "three", True, None, ...]
    v = ()
    w = (N,)
    z = f(1, key=2, other=(3, 4),)
    k = 0x_FF + 0b1010 + 1_000 + .5 + 1e-3
    store(x.tile((BLOCK,))[program_id(0)], a)
    return
    return a, b
)";

TEST(Parser, GemmExampleParsesCleanly) {
  Parsed p = parseText(kGemm);
  EXPECT_EQ(p.diagnosticsText(), "");
  ASSERT_EQ(p.module->functions.size(), 2u);
  const ast::FunctionDef& gemm = *p.module->functions[0];
  EXPECT_EQ(gemm.name, "gemm");
  EXPECT_FALSE(gemm.hasSyntaxErrors);
  ASSERT_EQ(gemm.decorators.size(), 1u);
  EXPECT_EQ(gemm.decorators[0].name, "kernel");
  ASSERT_TRUE(gemm.decorators[0].args.has_value());
  ASSERT_EQ(gemm.decorators[0].args->size(), 2u);
  EXPECT_EQ(*(*gemm.decorators[0].args)[0].keyword, "grid");
  EXPECT_EQ(sexpr((*gemm.decorators[0].args)[0].value.get()), "tuple(cdiv(M, BM), cdiv(N, BN))");
  ASSERT_EQ(gemm.params.size(), 6u);
  EXPECT_EQ(gemm.params[0].name, "A");
  EXPECT_EQ(sexpr(gemm.params[0].annotation.get()), "Tensor[f32, tuple(M, K)]");
  EXPECT_EQ(gemm.params[5].name, "BK");
  EXPECT_EQ(sexpr(gemm.params[5].defaultValue.get()), "16");
  ASSERT_EQ(gemm.body.size(), 5u);
  EXPECT_EQ(gemm.body[3]->kind, ast::StmtKind::For);
  const auto& loop = static_cast<const ast::ForStmt&>(*gemm.body[3]);
  EXPECT_EQ(loop.body.size(), 5u);
  const auto& store = static_cast<const ast::AssignStmt&>(*gemm.body[4]);
  EXPECT_EQ(sexpr(store.targets[0].get()), "C.tile(tuple(BM, BN))[program_id(0), program_id(1)]");
  const ast::FunctionDef& gelu = *p.module->functions[1];
  EXPECT_EQ(gelu.decorators[0].name, "device");
  EXPECT_FALSE(gelu.decorators[0].args.has_value());
  const auto& ret = static_cast<const ast::ReturnStmt&>(*gelu.body[0]);
  EXPECT_EQ(sexpr(ret.value.get()), "((0.5 * v) * (1.0 + erf((v * 0.707107))))");
}

TEST(Parser, ExpressionIdsAreUniqueAndDense) {
  for (const char* text : {kGemm, kAllForms}) {
    Parsed p = parseText(text);
    std::set<uint32_t> ids;
    size_t count = 0;
    testing::forEachExpr(*p.module, [&](const ast::Expr& e) {
      ids.insert(e.id);
      ++count;
    });
    EXPECT_EQ(ids.size(), count);
    EXPECT_EQ(count, p.module->exprCount);
    EXPECT_EQ(*ids.begin(), 1u);
    EXPECT_EQ(*ids.rbegin(), p.module->exprCount);
  }
}

TEST(Parser, EveryStatementForm) {
  Parsed p = parseText(kAllForms);
  ASSERT_EQ(p.diagnosticsText(), "");
  const ast::FunctionDef& fn = *p.module->functions[0];
  EXPECT_EQ(sexpr(fn.returnAnnotation.get()), "None");
  const ast::Block& b = fn.body;
  auto assign = [&](size_t i) -> const ast::AssignStmt& { return static_cast<const ast::AssignStmt&>(*b.at(i)); };
  EXPECT_EQ(assign(0).targets.size(), 2u);  // a = b = 1
  EXPECT_EQ(sexpr(assign(1).targets[0].get()), "tuple(p, q)");
  EXPECT_EQ(sexpr(assign(1).value.get()), "tuple(q, p)");
  EXPECT_EQ(sexpr(assign(2).targets[0].get()), "tuple(r, t)");
  EXPECT_EQ(sexpr(assign(3).annotation.get()), "f32");
  EXPECT_EQ(sexpr(assign(3).value.get()), "2.5");
  const ast::BinaryOp augOps[] = {ast::BinaryOp::Add, ast::BinaryOp::Sub, ast::BinaryOp::Mul, ast::BinaryOp::Div,
                                  ast::BinaryOp::FloorDiv, ast::BinaryOp::Mod, ast::BinaryOp::Pow, ast::BinaryOp::MatMul,
                                  ast::BinaryOp::BitAnd, ast::BinaryOp::BitOr, ast::BinaryOp::BitXor, ast::BinaryOp::Shl,
                                  ast::BinaryOp::Shr};
  for (size_t i = 0; i < 13; ++i) {
    ASSERT_EQ(b.at(4 + i)->kind, ast::StmtKind::AugAssign) << i;
    EXPECT_EQ(static_cast<const ast::AugAssignStmt&>(*b[4 + i]).op, augOps[i]) << i;
  }
  const auto& loop = static_cast<const ast::ForStmt&>(*b.at(17));
  EXPECT_EQ(sexpr(loop.iter.get()), "range(0, 10, 2)");
  const auto& chain = static_cast<const ast::IfStmt&>(*loop.body.at(0));
  EXPECT_FALSE(chain.isElif);
  EXPECT_EQ(chain.then.at(0)->kind, ast::StmtKind::Continue);
  const auto& elif1 = static_cast<const ast::IfStmt&>(*chain.orelse.at(0));
  EXPECT_TRUE(elif1.isElif);
  EXPECT_EQ(elif1.then.at(0)->kind, ast::StmtKind::Break);
  const auto& elif2 = static_cast<const ast::IfStmt&>(*elif1.orelse.at(0));
  EXPECT_EQ(sexpr(elif2.cond.get()), "(not i)");
  EXPECT_EQ(elif2.then.at(0)->kind, ast::StmtKind::Pass);
  EXPECT_EQ(elif2.orelse.at(0)->kind, ast::StmtKind::Assign);
  const auto& loop2 = static_cast<const ast::WhileStmt&>(*b.at(18));
  EXPECT_EQ(sexpr(loop2.cond.get()), "(((n > 0) and (n != 7)) or False)");
  const auto& check = static_cast<const ast::AssertStmt&>(*b.at(19));
  EXPECT_EQ(sexpr(check.cond.get()), "(a.origin.col == b.origin.row)");
  EXPECT_EQ(sexpr(check.message.get()), "'same K'");
  EXPECT_EQ(static_cast<const ast::AssertStmt&>(*b.at(20)).message, nullptr);
  EXPECT_EQ(sexpr(assign(21).value.get()), "x[1:2, ::2, :, 3:, :4, i]");
  EXPECT_EQ(sexpr(assign(22).value.get()), "[1, 2.0, 'three', True, None, ...]");
  EXPECT_EQ(sexpr(assign(23).value.get()), "tuple()");
  EXPECT_EQ(sexpr(assign(24).value.get()), "tuple(N)");
  EXPECT_EQ(sexpr(assign(25).value.get()), "f(1, key=2, other=tuple(3, 4))");
  EXPECT_EQ(sexpr(assign(26).value.get()), "((((255 + 10) + 1000) + 0.5) + 0.001)");
  EXPECT_EQ(b.at(27)->kind, ast::StmtKind::Expr);
  EXPECT_EQ(static_cast<const ast::ReturnStmt&>(*b.at(28)).value, nullptr);
  EXPECT_EQ(sexpr(static_cast<const ast::ReturnStmt&>(*b.at(29)).value.get()), "tuple(a, b)");
}

std::string expr(const std::string& text) {
  Parsed p = parseText("x = " + text + "\n");
  EXPECT_EQ(p.diagnosticsText(), "") << text;
  if (p.module->strayStatements.empty()) return "<none>";
  return sexpr(static_cast<const ast::AssignStmt&>(*p.module->strayStatements[0]).value.get());
}

TEST(Parser, PrecedenceAndAssociativity) {
  EXPECT_EQ(expr("a + b * c"), "(a + (b * c))");
  EXPECT_EQ(expr("a - b - c"), "((a - b) - c)");
  EXPECT_EQ(expr("a / b // c % d @ e"), "((((a / b) // c) % d) @ e)");
  EXPECT_EQ(expr("2 ** 3 ** 2"), "(2 ** (3 ** 2))");
  EXPECT_EQ(expr("-x ** 2"), "(-(x ** 2))");
  EXPECT_EQ(expr("2 ** -x"), "(2 ** (-x))");
  EXPECT_EQ(expr("-a * b"), "((-a) * b)");
  EXPECT_EQ(expr("~a + +b"), "((~a) + (+b))");
  EXPECT_EQ(expr("a << b + c"), "(a << (b + c))");
  EXPECT_EQ(expr("a & b << c"), "(a & (b << c))");
  EXPECT_EQ(expr("a | b ^ c & d"), "(a | (b ^ (c & d)))");
  EXPECT_EQ(expr("a == b | c"), "(a == (b | c))");
  EXPECT_EQ(expr("not a == b"), "(not (a == b))");
  EXPECT_EQ(expr("a and not b or c"), "((a and (not b)) or c)");
  EXPECT_EQ(expr("a or b and c"), "(a or (b and c))");
  EXPECT_EQ(expr("a < b and c >= d"), "((a < b) and (c >= d))");
  EXPECT_EQ(expr("(a + b) * c"), "((a + b) * c)");
  EXPECT_EQ(expr("a.b(c)[d].e"), "a.b(c)[d].e");
  EXPECT_EQ(expr("-a.b ** 2"), "(-(a.b ** 2))");
  EXPECT_EQ(expr("f(x)(y)[0][1]"), "f(x)(y)[0][1]");
  EXPECT_EQ(expr("(a <= b) != (c > d)"), "((a <= b) != (c > d))");
}

TEST(Parser, Literals) {
  EXPECT_EQ(expr("0x7FFF_FFFF_FFFF_FFFF"), "9223372036854775807");
  EXPECT_EQ(expr("0b1_01"), "5");
  EXPECT_EQ(expr("'a\\tb\\\\c\\'d\\\"e\\n'"), "'a\tb\\c'd\"e\n'");
  EXPECT_EQ(expr("\"\"\"two\nlines\"\"\""), "'two\nlines'");
  EXPECT_EQ(expr("(1,)"), "tuple(1)");
  EXPECT_EQ(expr("[]"), "[]");
  EXPECT_EQ(expr("1, 2,"), "tuple(1, 2)");
}

TEST(Parser, SingleLineSuites) {
  Parsed p = parseText("def f(x):\n    if x: return 1\n    for i in range(3): pass\n    return 0\n");
  ASSERT_EQ(p.diagnosticsText(), "");
  const ast::Block& b = p.module->functions[0]->body;
  ASSERT_EQ(b.size(), 3u);
  EXPECT_EQ(static_cast<const ast::IfStmt&>(*b[0]).then.at(0)->kind, ast::StmtKind::Return);
  EXPECT_EQ(static_cast<const ast::ForStmt&>(*b[1]).body.at(0)->kind, ast::StmtKind::Pass);
}

TEST(Parser, ExactRanges) {
  Parsed p = parseText(kGemm);
  const ast::FunctionDef& gemm = *p.module->functions[0];
  EXPECT_EQ(p.at(gemm.range), "1:1-13:57");
  EXPECT_EQ(p.at(gemm.nameRange), "2:5-2:9");
  EXPECT_EQ(p.text(gemm.decorators[0].range), "@kernel(grid=(cdiv(M, BM), cdiv(N, BN)), warps=4)");
  EXPECT_EQ(p.text(gemm.decorators[0].nameRange), "kernel");
  EXPECT_EQ(p.text((*gemm.decorators[0].args)[1].range), "warps=4");
  EXPECT_EQ(p.text((*gemm.decorators[0].args)[1].keywordRange), "warps");
  EXPECT_EQ(p.text(gemm.params[3].range), "BM: const = 64");
  EXPECT_EQ(p.text(gemm.params[3].nameRange), "BM");

  const auto& first = static_cast<const ast::AssignStmt&>(*gemm.body[0]);
  EXPECT_EQ(p.text(first.range), "a_s = shared(f32, (BM, BK))");
  const auto& call = static_cast<const ast::CallExpr&>(*first.value);
  EXPECT_EQ(p.text(call.range), "shared(f32, (BM, BK))");
  EXPECT_EQ(p.text(call.parenRange), "(f32, (BM, BK))");
  EXPECT_EQ(p.text(call.args[1].value->range), "(BM, BK)");  // a tuple includes its parentheses

  const auto& loop = static_cast<const ast::ForStmt&>(*gemm.body[3]);
  EXPECT_EQ(p.at(loop.range), "7:5-12:18");
  const auto& copyCall = static_cast<const ast::CallExpr&>(*static_cast<const ast::ExprStmt&>(*loop.body[0]).expr);
  const auto& view = static_cast<const ast::SubscriptExpr&>(*copyCall.args[1].value);
  EXPECT_EQ(p.text(view.range), "A.tile((BM, BK))[program_id(0), kt]");
  const auto& tileCall = static_cast<const ast::CallExpr&>(*view.base);
  const auto& attr = static_cast<const ast::AttributeExpr&>(*tileCall.callee);
  EXPECT_EQ(p.text(attr.range), "A.tile");
  EXPECT_EQ(p.text(attr.nameRange), "tile");

  const auto& ret = static_cast<const ast::ReturnStmt&>(*p.module->functions[1]->body[0]);
  const auto& mul = static_cast<const ast::BinaryExpr&>(*ret.value);
  EXPECT_EQ(p.text(mul.range), "0.5 * v * (1.0 + erf(v * 0.7071067811865476))");
  EXPECT_EQ(p.text(mul.opRange), "*");
  EXPECT_EQ(p.at(mul.opRange), "17:20-17:21");
  // `(1.0 + ...)`: a parenthesized expression keeps its inner range.
  EXPECT_EQ(p.text(mul.rhs->range), "1.0 + erf(v * 0.7071067811865476)");
}

TEST(Parser, StatementAndChainRanges) {
  Parsed p = parseText("def f(x):\n    if x:\n        a = 1\n    elif y:\n        b = 2\n    else:\n        c = 3\n    x += 1\n");
  ASSERT_EQ(p.diagnosticsText(), "");
  const ast::Block& b = p.module->functions[0]->body;
  const auto& top = static_cast<const ast::IfStmt&>(*b[0]);
  EXPECT_EQ(p.at(top.range), "2:5-7:14");
  EXPECT_EQ(p.at(top.orelse[0]->range), "4:5-7:14");
  const auto& aug = static_cast<const ast::AugAssignStmt&>(*b[1]);
  EXPECT_EQ(p.text(aug.range), "x += 1");
  EXPECT_EQ(p.text(aug.opRange), "+=");
}

TEST(Parser, TopLevelStatementsAreKeptForSema) {
  Parsed p = parseText("x = 1\ndef f():\n    pass\nprint(x)\n");
  ASSERT_EQ(p.diagnosticsText(), "");
  EXPECT_EQ(p.module->functions.size(), 1u);
  EXPECT_EQ(p.module->strayStatements.size(), 2u);
}

TEST(Parser, RecoveringParserBuildsTheSameTreeOnValidInput) {
  for (const char* text : {kGemm, kAllForms}) {
    SourceFile file("test.ag", text);
    DiagnosticSink fastDiags, slowDiags;
    auto fast = frontend::parse(file, fastDiags, /*forceRecovery=*/false);
    auto slow = frontend::parse(file, slowDiags, /*forceRecovery=*/true);
    EXPECT_EQ(ast::dumpAst(*fast, file), ast::dumpAst(*slow, file));
    EXPECT_EQ(fast->exprCount, slow->exprCount);
    EXPECT_TRUE(fastDiags.diagnostics().empty());
    EXPECT_TRUE(slowDiags.diagnostics().empty());
  }
}

TEST(Parser, DumpIsReadable) {
  Parsed p = parseText("@device\ndef f(v):\n    return -v ** 2\n");
  EXPECT_EQ(p.dump(),
            "Module\n"
            "  Function f @1:1-3:19\n"
            "    decorator: @device @1:1-1:8\n"
            "    param: v @2:7-2:8\n"
            "    body:\n"
            "      Return @3:5-3:19\n"
            "        value: Unary - @3:12-3:19\n"
            "          operand: Binary ** @3:13-3:19\n"
            "            lhs: Name v @3:13-3:14\n"
            "            rhs: Int 2 @3:18-3:19\n");
}

TEST(Parser, OperatorSpellings) {
  EXPECT_STREQ(ast::binaryOpSpelling(ast::BinaryOp::FloorDiv), "//");
  EXPECT_STREQ(ast::binaryOpSpelling(ast::BinaryOp::MatMul), "@");
  EXPECT_STREQ(ast::binaryOpSpelling(ast::BinaryOp::And), "and");
  EXPECT_STREQ(ast::unaryOpSpelling(ast::UnaryOp::Invert), "~");
  EXPECT_STREQ(ast::unaryOpSpelling(ast::UnaryOp::Not), "not");
}

}  // namespace
}  // namespace argus

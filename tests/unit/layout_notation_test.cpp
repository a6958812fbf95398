// CuTe notation: parsing, printing, expression evaluation and error positions.
#include <gtest/gtest.h>

#include <iterator>
#include <random>

#include "layout/evaluate.h"
#include "layout/print.h"
#include "layout_test_util.h"

namespace argus::layout {
namespace {

using testing::eval;
using testing::L;

ExpressionError errorOf(const std::string& text) {
  EvalResult result = evaluateExpression(text);
  EXPECT_TRUE(std::holds_alternative<ExpressionError>(result)) << text;
  if (auto* e = std::get_if<ExpressionError>(&result)) return *e;
  return {};
}

TEST(LayoutNotation, RoundTripsCuTeNotation) {
  for (const char* text : {"(2,(3,4)):(1,(2,6))", "8:1", "((2,2),3):((1,4),2)", "(4,2):(1,4)", "(3):(2)",
                           "(2,3):(1,-2)"})
    EXPECT_EQ(eval(text), text);
  EXPECT_EQ(eval("(_2,_3):(_1,_2)"), "(2,3):(1,2)");  // CuTe's static notation is accepted
  EXPECT_EQ(eval("(4,8)"), "(4,8)");                  // a shape stays a tuple ...
  EXPECT_EQ(eval("make_layout((4,8))"), "(4,8):(1,4)");  // ... and becomes column-major on request
  EXPECT_EQ(eval("row_major((4,8))"), "(4,8):(8,1)");
  EXPECT_EQ(eval("Swizzle<3,3,3>"), "Sw<3,3,3>");
  EXPECT_EQ(eval("Swizzle<3,3,3> o (8,64):(64,1)"), "Sw<3,3,3> o 0 o (8,64):(64,1)");
  EXPECT_EQ(eval("Sw<2,4,3> o 32 o (8,64):(64,1)"), "Sw<2,4,3> o 32 o (8,64):(64,1)");
  EXPECT_EQ(eval("<4:1, 8:2>"), "<4:1,8:2>");
  EXPECT_EQ(toString(L("  ( 2 , 3 ) : ( 1 , 2 ) ")), "(2,3):(1,2)");
}

TEST(LayoutNotation, EvaluatesCalls) {
  EXPECT_EQ(eval("coalesce((2,(1,6)):(1,(6,2)))"), "12:1");
  EXPECT_EQ(eval("composition((6,2):(8,2), (4,3):(3,1))"), "((2,2),3):((24,2),8)");
  EXPECT_EQ(eval("(6,2):(8,2) o (4,3):(3,1)"), "((2,2),3):((24,2),8)");
  EXPECT_EQ(eval("complement((2,2):(1,6), 24)"), "(3,2):(2,12)");
  EXPECT_EQ(eval("logical_divide((4,2,3):(2,1,8), 4:2)"), "((2,2),(2,3)):((4,1),(2,8))");
  EXPECT_EQ(eval("composition((12,(4,8)):(59,(13,1)), <3:4, 8:2>)"), "(3,(2,4)):(236,(26,1))");
  EXPECT_EQ(eval("size((2,(3,4)):(1,(2,6)))"), "24");
  EXPECT_EQ(eval("cosize((2,2):(1,6))"), "8");
  EXPECT_EQ(eval("rank((2,(3,4)):(1,(2,6)))"), "2");
  EXPECT_EQ(eval("depth((2,(3,4)):(1,(2,6)))"), "2");
  EXPECT_EQ(eval("shape((2,(3,4)):(1,(2,6)))"), "(2,(3,4))");
  EXPECT_EQ(eval("get((2,(3,4)):(1,(2,6)), 1, 0)"), "3:2");
  EXPECT_EQ(eval("right_inverse((4,8):(8,1))"), "(8,4):(4,1)");
  EXPECT_EQ(eval("coalesce((2,(1,6)):(1,(6,2)), (1,1))"), "(2,6):(1,2)");
  EXPECT_EQ(eval("make_layout(4:1, 3:4)"), "(4,3):(1,4)");
  EXPECT_EQ(eval("make_ordered_layout((2,3,4), (1,2,0))"), "(2,3,4):(4,8,1)");
  // Evaluation at an index, a coordinate, a natural coordinate.
  EXPECT_EQ(eval("(2,(3,4)):(1,(2,6))(5)"), "5");
  EXPECT_EQ(eval("(2,(3,4)):(1,(2,6))(1,5)"), "1" + std::string("1") /* 1 + 2*2 + 6*1 */);
  EXPECT_EQ(eval("(2,(3,4)):(1,(2,6))(1,(2,3))"), "23");
  EXPECT_EQ(eval("Swizzle<3,3,3>(64)"), "72");
  EXPECT_EQ(eval("idx2crd(17, (2,(3,4)))"), "(1,(2,2))");
  EXPECT_EQ(eval("crd2idx((1,(2,2)), (2,(3,4)))"), "17");
  EXPECT_EQ(eval("crd2idx((1,2), (4,8), (8,1))"), "10");
  EXPECT_EQ(eval("mma_m16n8k16_a(bf16)(5,3)"), "(9,3)");
  EXPECT_EQ(eval("tv_layout(((4,8),2):((16,1),8), (8,8))"), eval("ldmatrix_x1()"));
  EXPECT_EQ(eval("ldmatrix_x4(trans)"), "((4,8),(2,2,2)):((2,16),(1,8,128))");
  EXPECT_EQ(eval("(Sw<3,3,3> o (8,64):(64,1))(1)"), "72");  // parentheses group expressions
  EXPECT_EQ(eval("(size(8:1))"), "8");
  EXPECT_EQ(eval("composition(Sw<3,3,3> o (8,64):(64,1), (2,8):(1,2))"), "Sw<3,3,3> o 0 o (2,(4,2)):(64,(128,1))");
  EXPECT_EQ(eval("tiled_divide((8,8):(1,8), (2,4))"), "((2,4),4,2):((1,8),2,32)");
  EXPECT_EQ(eval("flat_divide((8,8):(1,8), (2,4))"), "(2,4,4,2):(1,8,2,32)");
  EXPECT_EQ(eval("blocked_product((2,5):(5,1), (3,4):(1,3))"), "(6,(5,4)):(5,(1,30))");
}

TEST(LayoutNotation, ErrorsPointAtTheCulprit) {
  ExpressionError e = errorOf("logical_divide((4,2,3):(2,1,8), 4:2");
  EXPECT_EQ(e.range.begin, 35u);
  EXPECT_NE(e.message.find("')'"), std::string::npos);
  e = errorOf("(2,3):(1,2,3)");
  EXPECT_NE(e.message.find("same structure"), std::string::npos) << e.message;
  EXPECT_EQ(e.range.begin, 0u);
  e = errorOf("composition(8:1, 4:x)");
  EXPECT_EQ(e.range.begin, 19u);
  e = errorOf("coalesce(8:1, 4:1, 2:1)");
  EXPECT_NE(e.message.find("takes 1 to 2 arguments"), std::string::npos) << e.message;
  e = errorOf("logical_divid(8:1, 2)");
  EXPECT_NE(e.message.find("did you mean 'logical_divide'"), std::string::npos) << e.message;
  EXPECT_EQ(e.range.end, 13u);
  e = errorOf("composition((4,4):(1,10), 6:1)");
  EXPECT_NE(e.message.find("shape divisibility"), std::string::npos) << e.message;
  e = errorOf("complement(8:1, 2:1, 3)");
  EXPECT_FALSE(e.message.empty());
  e = errorOf("size(4:1, 8)");
  EXPECT_FALSE(e.message.empty());
  e = errorOf("(0,2):(1,1)");
  EXPECT_NE(e.message.find("non-positive"), std::string::npos) << e.message;
  e = errorOf("(65536,65536):(1,65536)");
  EXPECT_NE(e.message.find("too large"), std::string::npos) << e.message;
  e = errorOf("Swizzle<3,3,2>");
  EXPECT_NE(e.message.find("|S|"), std::string::npos) << e.message;
  e = errorOf("mma_m16n8k16_a(f32)");
  EXPECT_NE(e.message.find("bf16 or f16"), std::string::npos) << e.message;
  e = errorOf("bf16");
  EXPECT_NE(e.message.find("unknown name"), std::string::npos) << e.message;
  e = errorOf("8:1 $");
  EXPECT_EQ(e.range.begin, 4u);
  e = errorOf("99999999999999999999:1");
  EXPECT_NE(e.message.find("too large"), std::string::npos) << e.message;
  e = errorOf("");
  EXPECT_FALSE(e.message.empty());
}

TEST(LayoutNotation, RejectsOverflowingShapesAndCoordinates) {
  // Each of these multiplied past 2^63 in 64 bits (undefined behaviour, caught
  // by -fsanitize=undefined) before any bounds check saw the result.
  const std::string huge = "1099511627776";  // 2^40, the largest literal
  const std::string hugeShape = "(" + huge + "," + huge + "," + huge + ")";
  for (const std::string& text :
       {"col_major(" + hugeShape + ")", "row_major(" + hugeShape + ")", "make_layout(" + hugeShape + ")",
        "make_ordered_layout(" + hugeShape + ",(1,2,3))", "idx2crd(5, " + hugeShape + ")",
        "complement(4:1, " + hugeShape + ")", "size(" + hugeShape + ")",
        "logical_divide(8:1, ((" + huge + "," + huge + "),2))",
        "tv_layout((32,2):(2,1), (" + huge + "," + huge + "))"}) {
    ExpressionError e = errorOf(text);
    EXPECT_NE(e.message.find("too large"), std::string::npos) << text << ": " << e.message;
  }
  for (const std::string& text :
       {"2:1073741824(" + huge + ")", "crd2idx(" + huge + ", 2:1073741824)",
        "(Sw<3,3,3> o 2:1073741824)(" + huge + ")", "crd2idx((" + huge + "," + huge + "), (2,1):(1," + huge + "))"}) {
    ExpressionError e = errorOf(text);
    EXPECT_NE(e.message.find("too far outside"), std::string::npos) << text << ": " << e.message;
  }
  // Extrapolating outside the domain within range still works, as in CuTe.
  EXPECT_EQ(eval("2:1073741824(1024)"), "1099511627776");
}

TEST(LayoutNotation, SurvivesGarbage) {
  // Never crashes: every prefix of a valid expression is an error or a value.
  std::string text = "zipped_divide(Swizzle<3,3,3> o (8,(4,2)):(8,(1,64)), <2:1, (2,2):(1,4)>)(3)";
  for (size_t n = 0; n <= text.size(); ++n) (void)evaluateExpression(text.substr(0, n));
  for (const char* junk : {"(((((", ")))", "<<<>>>", "o o o", ":::", "-", "(1,)", "Sw<", "8:1 o", "size()"})
    EXPECT_TRUE(std::holds_alternative<ExpressionError>(evaluateExpression(junk))) << junk;
}

TEST(LayoutNotation, SurvivesRandomTokenSoup) {
  const char* vocabulary[] = {"(", ")", ",", ":", "<", ">", "-", "o", "2", "3", "0", "_4", "64", "Sw",
                              "Swizzle", "size", "composition", "zipped_divide", "complement", "bf16",
                              "mma_m16n8k16_a", "tv_inverse", "ldmatrix_x4", "right_inverse", " "};
  std::mt19937 rng(9);
  std::uniform_int_distribution<size_t> pick(0, std::size(vocabulary) - 1), length(1, 30);
  for (int trial = 0; trial < 20000; ++trial) {
    std::string text;
    for (size_t n = length(rng); n > 0; --n) text += vocabulary[pick(rng)];
    (void)evaluateExpression(text);  // must return, whatever it says
  }
  ExpressionError deep = errorOf(std::string(100000, '(') + "1" + std::string(100000, ')'));
  EXPECT_NE(deep.message.find("nests deeper"), std::string::npos) << deep.message;
  ExpressionError deepCalls = errorOf(std::string(2000, '(') + "size(8:1)");
  EXPECT_FALSE(deepCalls.message.empty());
}

TEST(LayoutPicture, MatchesCuTePrintLayout) {
  Result<std::string> picture = printLayout(L("(4,2):(1,4)"));
  ASSERT_TRUE(picture.ok());
  EXPECT_EQ(*picture,
            "(4,2):(1,4)\n"
            "      0   1 \n"
            "    +---+---+\n"
            " 0  | 0 | 4 |\n"
            "    +---+---+\n"
            " 1  | 1 | 5 |\n"
            "    +---+---+\n"
            " 2  | 2 | 6 |\n"
            "    +---+---+\n"
            " 3  | 3 | 7 |\n"
            "    +---+---+\n");
  Result<std::string> row = printLayout(L("4:3"));
  ASSERT_TRUE(row.ok());
  EXPECT_EQ(*row,
            "4:3\n"
            "       0    1    2    3 \n"
            "    +----+----+----+----+\n"
            " 0  |  0 |  3 |  6 |  9 |\n"
            "    +----+----+----+----+\n");
  EXPECT_FALSE(printLayout(Layout(1 << 20, 1)).ok());
}

}  // namespace
}  // namespace argus::layout

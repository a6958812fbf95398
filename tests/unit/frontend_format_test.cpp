// The canonical formatter: one before/after pair per rule, then the safety
// properties on every example, golden IR input and reference-page block:
// formatting keeps the tokens and the Tile IR, is idempotent, and undoes a
// deliberately messy respelling of the same program.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "frontend/format.h"
#include "frontend/lexer.h"
#include "frontend/parser.h"
#include "frontend/sema.h"
#include "ir/ir.h"

namespace argus {
namespace {

namespace fs = std::filesystem;

std::string format(const std::string& text) {
  std::string why;
  std::optional<std::string> out = formatSource(SourceFile("t.ag", text), {}, &why);
  EXPECT_TRUE(out.has_value()) << why << "\n" << text;
  return out.value_or("<not formatted>");
}

// A kernel wrapper so that statements can be tested in context.
std::string kernel(const std::string& body) {
  return "@kernel(grid=(1,), warps=1)\ndef k(x: Tensor[f32, (16,)]):\n" + body;
}

TEST(Format, SpacesAroundBinaryOperatorsAndAssignments) {
  EXPECT_EQ(format(kernel("    t=load(x)*2+1\n    t+=t//3%2\n    u=t<=1\n")),
            kernel("    t = load(x) * 2 + 1\n    t += t // 3 % 2\n    u = t <= 1\n"));
  EXPECT_EQ(format(kernel("    t = a**2 - b@c\n")), kernel("    t = a ** 2 - b @ c\n"));
}

TEST(Format, UnaryOperatorsHugTheirOperand) {
  EXPECT_EQ(format(kernel("    t = - x\n    u = a * - b\n    v = f(- 1, other = - inf)\n    return - t\n")),
            kernel("    t = -x\n    u = a * -b\n    v = f(-1, other=-inf)\n    return -t\n"));
  EXPECT_EQ(format(kernel("    t = a - -b\n    u = (a)-b\n    v = c[0]-1\n")),
            kernel("    t = a - -b\n    u = (a) - b\n    v = c[0] - 1\n"));
}

TEST(Format, KeywordArgumentsAndDefaultsHaveNoSpacesButAnnotatedDefaultsDo) {
  EXPECT_EQ(format("@kernel(grid = (1, ), warps = 4)\ndef k(x: Tensor[f32, (16,)], BM:const=64, s : f32):\n"
                   "    t = load(x, other = 0)\n"),
            "@kernel(grid=(1,), warps=4)\ndef k(x: Tensor[f32, (16,)], BM: const = 64, s: f32):\n"
            "    t = load(x, other=0)\n");
  EXPECT_EQ(format("@device\ndef f(a, b = 2):\n    return a\n"), "@device\ndef f(a, b=2):\n    return a\n");
}

TEST(Format, CommasBracketsColonsAndDots) {
  EXPECT_EQ(format(kernel("    t = load( x . tile( ( 4 , ) ) [ 0 ] )\n")),
            kernel("    t = load(x.tile((4,))[0])\n"));
  EXPECT_EQ(format(kernel("    for i in range (0,4) :\n        pass\n")),
            kernel("    for i in range(0, 4):\n        pass\n"));
  EXPECT_EQ(format(kernel("    if not(a) and(b):\n        pass\n")), kernel("    if not (a) and (b):\n        pass\n"));
  EXPECT_EQ(format(kernel("    a , b = 1 ,2\n")), kernel("    a, b = 1, 2\n"));
  EXPECT_EQ(format(kernel("    t = y[0 : 4 :2]\n    u : f32 = 1\n")), kernel("    t = y[0:4:2]\n    u: f32 = 1\n"));
}

TEST(Format, DecoratorsAndArrows) {
  EXPECT_EQ(format("@ device\ndef f(a)->f32:\n    return a\n"), "@device\ndef f(a) -> f32:\n    return a\n");
}

TEST(Format, IndentationBecomesFourSpaces) {
  EXPECT_EQ(format("@kernel(grid=(1,), warps=1)\ndef k(x: Tensor[f32, (16,)]):\n  t = load(x)\n  if t > 0:\n"
                   "         t = t + 1\n  pass\n"),
            kernel("    t = load(x)\n    if t > 0:\n        t = t + 1\n    pass\n"));
}

TEST(Format, CommentsGetASpaceAndTrailingOnesTwoBefore) {
  EXPECT_EQ(format("#top\n" + kernel("    t = load(x) #why\n    ##### banner\n    #!keep\n")),
            "# top\n" + kernel("    t = load(x)  # why\n    ##### banner\n    #!keep\n"));
  EXPECT_EQ(format(kernel("    t = 1   # spaced   \n")), kernel("    t = 1  # spaced\n"));
}

TEST(Format, CommentsFollowTheBlockTheyAreIndentedIn) {
  std::string in = kernel("    if 1 > 0:\n        t = 1\n          # in the if\n      # in the kernel\n    pass\n# after\n");
  EXPECT_EQ(format(in), kernel("    if 1 > 0:\n        t = 1\n        # in the if\n    # in the kernel\n    pass\n# after\n"));
  // A comment before an indented body takes the body's indentation.
  EXPECT_EQ(format(kernel("    for i in range(4):\n# first\n        pass\n")),
            kernel("    for i in range(4):\n        # first\n        pass\n"));
}

TEST(Format, TrailingWhitespaceAndFinalNewlines) {
  EXPECT_EQ(format(kernel("    t = 1   \n    pass\t\n\n\n\n")), kernel("    t = 1\n    pass\n"));
  EXPECT_EQ(format(kernel("    pass")), kernel("    pass\n"));  // a final newline is added
  EXPECT_EQ(format("\n\n\n" + kernel("    pass\n")), kernel("    pass\n"));
  EXPECT_EQ(format(""), "");
  EXPECT_EQ(format("# only a comment"), "# only a comment\n");
}

TEST(Format, BlankLinesAreCappedAtTwo) {
  EXPECT_EQ(format(kernel("    a = 1\n\n\n\n\n    b = 2\n\n    c = 3\n")), kernel("    a = 1\n\n\n    b = 2\n\n    c = 3\n"));
}

TEST(Format, TwoBlankLinesBetweenTopLevelDefinitions) {
  std::string device = "@device\ndef f(a):\n    return a\n";
  EXPECT_EQ(format(device + kernel("    pass\n")), device + "\n\n" + kernel("    pass\n"));
  EXPECT_EQ(format(device + "\n\n\n\n\n" + kernel("    pass\n")), device + "\n\n" + kernel("    pass\n"));
  // Comments attached to a definition move with it.
  EXPECT_EQ(format(device + "# the kernel\n" + kernel("    pass\n")), device + "\n\n# the kernel\n" + kernel("    pass\n"));
  EXPECT_EQ(format(device + "\n# about f\n\n" + kernel("    pass\n")), device + "\n# about f\n\n\n" + kernel("    pass\n"));
  // No blank line between a decorator and its def.
  EXPECT_EQ(format("@device\n\n\ndef f(a):\n    return a\n"), device);
}

TEST(Format, LineBreaksInsideBracketsAreKeptAndAligned) {
  EXPECT_EQ(format("@kernel(grid=(1,), warps=1)\ndef k(x: Tensor[f32, (16,)],\n  y: Tensor[f32, (16,)],   # out\n"
                   "                        BM: const = 4):\n    pass\n"),
            "@kernel(grid=(1,), warps=1)\ndef k(x: Tensor[f32, (16,)],\n      y: Tensor[f32, (16,)],  # out\n"
            "      BM: const = 4):\n    pass\n");
  // After a bracket that ends its line: one level in, the closing bracket back out.
  EXPECT_EQ(format(kernel("    t = f(\n a,\n            # note\n       b\n            )\n")),
            kernel("    t = f(\n        a,\n        # note\n        b\n    )\n"));
  EXPECT_EQ(format(kernel("    t = f(\n        a,\n  # last\n    )\n")),
            kernel("    t = f(\n        a,\n        # last\n    )\n"));
  // Nested brackets align with their own opening bracket.
  EXPECT_EQ(format(kernel("    t = f(g(a,\n b), c)\n")), kernel("    t = f(g(a,\n            b), c)\n"));
}

TEST(Format, BackslashContinuations) {
  EXPECT_EQ(format(kernel("    t = 1 +\\\n  2\n")), kernel("    t = 1 + \\\n        2\n"));
}

TEST(Format, BrokenFilesAreNotFormatted) {
  std::string why;
  EXPECT_FALSE(formatSource(SourceFile("bad.ag", kernel("    t = (1 +\n")), {}, &why).has_value());
  EXPECT_NE(why.find("bad.ag:"), std::string::npos) << why;
  EXPECT_FALSE(formatSource(SourceFile("bad.ag", kernel("    t = 1 $ 2\n"))).has_value());
  EXPECT_FALSE(formatSource(SourceFile("bad.ag", "def f(:\n")).has_value());
  EXPECT_FALSE(formatBlockers(SourceFile("bad.ag", "def f(:\n")).empty());
  EXPECT_TRUE(formatBlockers(SourceFile("ok.ag", kernel("    pass\n"))).empty());
}

// ---- Properties over every program the repository holds ----

std::string readFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

struct Program {
  std::string name, text;
};

std::vector<Program> corpus() {
  std::vector<Program> programs;
  fs::path root(ARGUS_SOURCE_DIR);
  for (const fs::path& dir : {root / "examples", root / "tests" / "golden" / "ir"})
    for (const auto& entry : fs::directory_iterator(dir))
      if (entry.path().extension() == ".ag") programs.push_back({entry.path().string(), readFile(entry.path())});
  std::istringstream doc(readFile(root / "docs" / "language.md"));
  std::string line, block;
  bool inBlock = false;
  int lineNo = 0, blockLine = 0;
  while (std::getline(doc, line)) {
    ++lineNo;
    if (!inBlock && line.rfind("```python", 0) == 0) {
      inBlock = true;
      block.clear();
      blockLine = lineNo;
    } else if (inBlock && line.rfind("```", 0) == 0) {
      inBlock = false;
      programs.push_back({"docs/language.md:" + std::to_string(blockLine), block});
    } else if (inBlock) {
      block += line + "\n";
    }
  }
  return programs;
}

// Kinds of every token and the text of the non-layout ones.
std::vector<std::string> tokenSignature(const std::string& text) {
  DiagnosticSink diags;
  std::vector<std::string> signature;
  for (const TokenInfo& t : tokenize(SourceFile("t.ag", text), diags)) {
    bool layout = t.kind == "NEWLINE" || t.kind == "INDENT" || t.kind == "DEDENT" || t.kind == "EOF";
    signature.push_back(layout ? t.kind : t.kind + " " + t.text);
  }
  return signature;
}

std::string tileIR(const std::string& text) {
  SourceFile file("t.ag", text);
  DiagnosticSink diags;
  std::unique_ptr<ast::Module> module = parseModule(file, diags);
  sema::Result result = sema::analyze(*module, file, {}, diags);
  return result.module ? ir::print(*result.module) : "<no module>";
}

// The same program with the spaces between tokens of a line shuffled (none
// where tokens cannot merge, otherwise 1 to 3) and indentation halved.
std::string messUp(const std::string& text, unsigned seed) {
  std::mt19937 random(seed);
  DiagnosticSink diags;
  SourceFile file("t.ag", text);
  std::vector<TokenInfo> tokens = tokenize(file, diags);
  auto isBracketOrComma = [](const TokenInfo& t) {
    return t.text == "(" || t.text == ")" || t.text == "[" || t.text == "]" || t.text == ",";
  };
  std::string out;
  uint32_t copied = 0;
  const TokenInfo* previous = nullptr;
  for (const TokenInfo& t : tokens) {
    if (t.kind == "NEWLINE" || t.kind == "DEDENT" || t.kind == "EOF") {
      previous = nullptr;
      continue;
    }
    if (t.kind == "INDENT") continue;
    std::string gap(file.slice({copied, t.range.begin}));
    if (previous && gap.find_first_not_of(" ") == std::string::npos) {
      bool mayTouch = isBracketOrComma(*previous) || isBracketOrComma(t);
      gap = std::string(mayTouch ? random() % 3 : 1 + random() % 3, ' ');
    } else if (!previous) {
      // Indentation before the first token of a logical line: halve it.
      size_t lineStart = gap.rfind('\n');
      if (lineStart != std::string::npos) {
        size_t width = gap.size() - lineStart - 1;
        if (gap.find_first_not_of(' ', lineStart + 1) == std::string::npos) gap.resize(lineStart + 1 + width / 2);
      }
    }
    out += gap + t.text;
    copied = t.range.end;
    previous = &t;
  }
  return out + std::string(file.slice({copied, static_cast<uint32_t>(text.size())}));
}

TEST(FormatCorpus, KeepsTokensAndTileIRAndIsIdempotent) {
  std::vector<Program> programs = corpus();
  ASSERT_GT(programs.size(), 10u);
  for (const Program& p : programs) {
    SCOPED_TRACE(p.name);
    std::string once = format(p.text);
    EXPECT_EQ(tokenSignature(once), tokenSignature(p.text));
    EXPECT_EQ(tileIR(once), tileIR(p.text));
    EXPECT_EQ(format(once), once);
  }
}

TEST(FormatCorpus, ExamplesAreAlreadyCanonical) {
  for (const Program& p : corpus()) EXPECT_EQ(format(p.text), p.text) << p.name;
}

TEST(FormatCorpus, UndoesAMessyRespelling) {
  int respelled = 0;
  for (const Program& p : corpus()) {
    for (unsigned seed = 1; seed <= 5; ++seed) {
      std::string messy = messUp(p.text, seed);
      respelled += messy != p.text;
      SCOPED_TRACE(p.name + " seed " + std::to_string(seed) + ":\n" + messy);
      ASSERT_EQ(tokenSignature(messy), tokenSignature(p.text));
      EXPECT_EQ(format(messy), format(p.text));
    }
  }
  EXPECT_GT(respelled, 50);
}

}  // namespace
}  // namespace argus

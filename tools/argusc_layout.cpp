// `argusc layout EXPRESSION`: the layout calculator. Evaluates an expression of
// CuTe layouts and algebra calls and prints the result in CuTe's notation and
// as a picture (offset grid, or thread-value grid).
// Exit status: 0 ok, 1 invalid expression or failed operation, 2 bad usage.
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "ir/parse.h"
#include "ir/thread_value.h"
#include "layout/evaluate.h"
#include "layout/print.h"

namespace argus::cli {
namespace {

constexpr const char* kLayoutUsage = R"(usage: argusc layout [--no-picture] 'EXPRESSION'
       argusc layout [--no-picture] [--warps=N] '#LAYOUT'

Evaluates a layout expression in CuTe's notation and prints the result and its
picture (coordinate -> offset grid; for thread-value layouts, which thread
holds each element of the tile as T<thread>V<value>).

Expressions:
  8:1   (2,(3,4)):(1,(2,6))   (4,8)          layouts (a bare shape is column-major)
  <4:1, 8:2>   (2,2)                          tilers (by-mode)
  Swizzle<3,3,3> o (8,64):(64,1)              swizzled layouts (Sw<3,3,3> o 0 o ...)
  A o B                                       composition
  L(5)   L(1,2)   L((1,1),2)                  evaluation at a coordinate
Functions:
  size cosize rank depth shape stride get coalesce flatten filter
  composition complement right_inverse left_inverse
  logical_divide zipped_divide tiled_divide flat_divide
  logical_product zipped_product blocked_product raked_product
  make_layout make_ordered_layout col_major row_major idx2crd(i, shape) crd2idx(c, shape[, stride])
  mma_m16n8k16_a(bf16|f16) mma_m16n8k16_b(bf16|f16) mma_m16n8k16_c(f32|f16)
  wgmma_m64nNk16_d(N, f32|f16) wgmma_m64nNk16_a(bf16|f16)
  ldmatrix_x1() ldmatrix_x2() ldmatrix_x4() (optionally (trans)), stmatrix_x1/x2/x4
  tv_layout(L, (rows,cols))  tv_inverse(TV)

options:
  --no-picture    print only the result in CuTe's notation
  --warps=N       the block's warps, for a register layout ('#...')
  -h, --help      print this help and exit
)";

constexpr const char* kIrLayoutUsage = R"(
Register layouts as the compiler prints them (--emit=ir, hover) are drawn as the
thread-value layout of their tile over the block's threads:
  '#blocked<[64, 64]>' --warps=4     the default distribution of a tile
  '#mma<[64, 64], warps=[2, 2]>'     mma.sync accumulators over a 2 x 2 warp grid
  '#wgmma<[64, 128], warpgroups=1>'  wgmma accumulators
  '#blocked<[4, 1024], reduced=[1]>', '#blocked<[4096], vec=8>'
--warps defaults to the layout's own warp grid (4 for a blocked layout).
)";

int usage(const std::string& message) {
  std::cerr << "argusc layout: error: " << message << "\n"
            << "argusc layout: run 'argusc layout --help' for usage\n";
  return 2;
}

void printPicture(const layout::Result<std::string>& picture, const std::string& notation) {
  if (picture) {
    std::cout << *picture;
  } else {
    std::cout << notation << "\n";
    std::cerr << "argusc layout: note: " << picture.error().message << "\n";
  }
}

// A register layout of the IR ('#mma<...>') as the thread-value layout of its tile.
int drawRegisterLayout(const std::string& text, std::optional<int64_t> warps, bool picture) {
  ir::LayoutParseResult parsed = ir::parseLayoutText(text);
  if (!parsed.ok) {
    std::cerr << "argusc layout: error: " << parsed.error << "\n  " << text << "\n";
    return 1;
  }
  const ir::Layout& irLayout = parsed.layout;
  const int64_t numWarps = warps ? *warps : irLayout.isMma() ? irLayout.warpsM * irLayout.warpsN : 4;
  const std::string problem = ir::layoutProblem(irLayout, numWarps);
  if (!problem.empty()) {
    std::cerr << "argusc layout: error: " << ir::layoutStr(irLayout) << " over " << numWarps
              << (numWarps == 1 ? " warp: " : " warps: ") << problem
              << "\n";
    return 1;
  }
  const layout::TVLayout tv = ir::threadValueLayout(irLayout, numWarps);
  const std::string notation = layout::toString(tv.layout);
  std::cout << ir::layoutStr(irLayout) << " over " << numWarps << (numWarps == 1 ? " warp: " : " warps: ")
            << 32 * numWarps << " threads x " << tv.values() << (tv.values() == 1 ? " value\n" : " values\n");
  if (!picture) {
    std::cout << notation << "\n";
    return 0;
  }
  printPicture(layout::printThreadValues(tv), notation);
  return 0;
}

}  // namespace

int layoutCommand(const std::vector<std::string>& args) {
  bool picture = true;
  std::optional<int64_t> warps;
  std::vector<std::string> expressions;
  for (const std::string& a : args) {
    if (a == "-h" || a == "--help") {
      std::cout << kLayoutUsage << kIrLayoutUsage;
      return 0;
    }
    if (a == "--no-picture") {
      picture = false;
      continue;
    }
    if (a.rfind("--warps=", 0) == 0) {
      const std::string number = a.substr(8);
      if (number.empty() || number.size() > 4 || number.find_first_not_of("0123456789") != std::string::npos ||
          std::stoll(number) < 1 || std::stoll(number) > 32)
        return usage("--warps takes a number of warps from 1 to 32, not '" + number + "'");
      warps = std::stoll(number);
      continue;
    }
    if (a.size() > 1 && a[0] == '-' && a[1] == '-') return usage("unknown option '" + a + "'");
    expressions.push_back(a);
  }
  if (expressions.empty()) return usage("no expression given, e.g. argusc layout '(4,2):(1,4)'");
  if (expressions.size() > 1)
    return usage("expected one expression, got " + std::to_string(expressions.size()) +
                 "; quote the expression so the shell passes it as one argument");

  const std::string& text = expressions[0];
  if (text.find_first_not_of(' ') != std::string::npos && text[text.find_first_not_of(' ')] == '#')
    return drawRegisterLayout(text, warps, picture);
  if (warps) return usage("--warps applies to a register layout such as '#mma<[64, 64], warps=[2, 2]>'");
  layout::EvalResult result = layout::evaluateExpression(text);
  if (auto* error = std::get_if<layout::ExpressionError>(&result)) {
    size_t begin = std::min(error->range.begin, text.size());
    size_t end = std::max(begin + 1, std::min(error->range.end, text.size()));
    std::cerr << "argusc layout: error: " << error->message << "\n"
              << "  " << text << "\n"
              << "  " << std::string(begin, ' ') << "^" << std::string(end - begin - 1, '~') << "\n";
    return 1;
  }
  const layout::Value& value = std::get<layout::Value>(result);
  std::string notation = layout::toString(value);
  if (!picture) {
    std::cout << notation << "\n";
    return 0;
  }
  if (auto* l = std::get_if<layout::Layout>(&value)) {
    printPicture(layout::printLayout(*l), notation);
  } else if (auto* c = std::get_if<layout::ComposedLayout>(&value)) {
    printPicture(layout::printLayout(*c), notation);
  } else if (auto* tv = std::get_if<layout::TVLayout>(&value)) {
    printPicture(layout::printThreadValues(*tv), notation);
  } else {
    std::cout << notation << "\n";
  }
  return 0;
}

}  // namespace argus::cli

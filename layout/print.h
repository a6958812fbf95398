// Text pictures of layouts, in the style of CuTe's print_layout: a grid of
// offsets with row and column headers, and for thread-value layouts a grid of
// the tile showing which thread holds each element as T<thread>V<value>.
#pragma once

#include <string>

#include "layout/layout.h"
#include "layout/result.h"
#include "layout/swizzle.h"
#include "layout/tv_layout.h"

namespace argus::layout {

// Largest number of cells a picture may have.
constexpr int64_t kLargestPicture = 1 << 16;

// Rank 2: rows are mode 0, columns mode 1 (CuTe's print_layout). Rank 1: one row.
// Rank 3 and more: rows are mode 0, columns the remaining modes in order.
// The first line is the layout in CuTe's notation, as print_layout prints it.
Result<std::string> printLayout(const Layout& layout);
Result<std::string> printLayout(const ComposedLayout& layout);
// The tile (rows x cols) with the T<thread>V<value> holding each element;
// `-` where no thread holds it.
Result<std::string> printThreadValues(const TVLayout& tv);

}  // namespace argus::layout

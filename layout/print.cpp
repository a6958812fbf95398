#include "layout/print.h"

#include <algorithm>
#include <functional>

namespace argus::layout {
namespace {

std::string padLeft(const std::string& s, size_t width) {
  return s.size() >= width ? s : std::string(width - s.size(), ' ') + s;
}

// CuTe's grid: "    " margin, column headers "  %*d ", separators "+---",
// rows "%2d  " then "| %*d " per cell, cell width = widest entry + 2.
std::string grid(int64_t rows, int64_t cols, const std::function<std::string(int64_t, int64_t)>& cell,
                 size_t entryWidth) {
  size_t width = std::max(entryWidth, std::to_string(std::max<int64_t>(cols - 1, 0)).size()) + 2;
  size_t rowLabelWidth = std::max<size_t>(2, std::to_string(std::max<int64_t>(rows - 1, 0)).size());
  std::string margin(rowLabelWidth + 2, ' ');
  std::string out = margin;
  for (int64_t n = 0; n < cols; ++n) out += "  " + padLeft(std::to_string(n), width - 2) + " ";
  out += "\n";
  std::string separator = margin;
  for (int64_t n = 0; n < cols; ++n) separator += "+" + std::string(width, '-');
  separator += "+\n";
  for (int64_t m = 0; m < rows; ++m) {
    out += separator;
    out += padLeft(std::to_string(m), rowLabelWidth) + "  ";
    for (int64_t n = 0; n < cols; ++n) out += "| " + padLeft(cell(m, n), width - 2) + " ";
    out += "|\n";
  }
  return out + separator;
}

Result<std::string> offsetGrid(const std::string& title, int64_t size, int64_t rows,
                               const std::function<int64_t(int64_t)>& offset) {
  if (size > kLargestPicture)
    return makeError("the layout has " + std::to_string(size) + " elements, too many to draw (at most " +
                     std::to_string(kLargestPicture) + ")");
  int64_t cols = size / rows;
  size_t entryWidth = 1;
  // CuTe sizes cells by the digits of cosize (one past the largest offset).
  for (int64_t i = 0; i < size; ++i)
    entryWidth = std::max({entryWidth, std::to_string(offset(i)).size(), std::to_string(offset(i) + 1).size()});
  return title + "\n" +
         grid(rows, cols, [&](int64_t m, int64_t n) { return std::to_string(offset(m + rows * n)); },
              entryWidth);
}

int64_t pictureRows(const Layout& layout) {
  return layout.rank() == 1 ? 1 : layout.mode(0).size();
}

}  // namespace

Result<std::string> printLayout(const Layout& layout) {
  return offsetGrid(toString(layout), layout.size(), pictureRows(layout),
                    [&](int64_t i) { return layout(i); });
}

Result<std::string> printLayout(const ComposedLayout& composed) {
  return offsetGrid(toString(composed), composed.size(), pictureRows(composed.layout),
                    [&](int64_t i) { return composed(i); });
}

Result<std::string> printThreadValues(const TVLayout& tv) {
  int64_t cells = tv.rows * tv.cols;
  if (cells > kLargestPicture || tv.layout.size() > kLargestPicture)
    return makeError("the tile has " + std::to_string(cells) + " elements, too many to draw");
  std::vector<std::string> holder(static_cast<size_t>(cells), "-");
  for (int64_t v = tv.values(); v-- > 0;)  // the first (t, v) holding an element wins
    for (int64_t t = tv.threads(); t-- > 0;) {
      int64_t offset = tv.offset(t, v);
      if (offset >= 0 && offset < cells)
        holder[static_cast<size_t>(offset)] = "T" + std::to_string(t) + "V" + std::to_string(v);
    }
  size_t entryWidth = 1;
  for (const std::string& h : holder) entryWidth = std::max(entryWidth, h.size());
  std::string title = toString(tv.layout) + "  (thread, value) -> (" + tv.rowName + ", " + tv.colName +
                      ") in a " + std::to_string(tv.rows) + "x" + std::to_string(tv.cols) +
                      " tile; rows: " + tv.rowName + ", columns: " + tv.colName;
  return title + "\n" +
         grid(tv.rows, tv.cols,
              [&](int64_t m, int64_t n) { return holder[static_cast<size_t>(m + tv.rows * n)]; }, entryWidth);
}

}  // namespace argus::layout

#include "checker/report_text.h"

namespace argus::checker {

std::string sourcePosition(const SourceFile* file, SourceRange range) {
  if (!file) return "";
  LineCol lc = file->lineCol(range.begin);
  return std::to_string(lc.line) + ":" + std::to_string(lc.column);
}

std::string describeThread(int64_t thread) {
  return "thread " + std::to_string(thread) + " (warp " + std::to_string(thread / 32) + ", lane " +
         std::to_string(thread % 32) + ")";
}

}  // namespace argus::checker

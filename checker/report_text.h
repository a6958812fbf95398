// Text shared by the checker's reports (internal to the checker).
#pragma once

#include <cstdint>
#include <string>

#include "support/source.h"

namespace argus::checker {

// "12:5", the line and column where `range` starts; "" without a file.
std::string sourcePosition(const SourceFile* file, SourceRange range);
// "thread 37 (warp 1, lane 5)".
std::string describeThread(int64_t thread);

}  // namespace argus::checker

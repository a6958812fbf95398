// Walking a Z3 formula without recursion (internal to the checker): the
// formulas the checker builds grow with the kernel, and a recursive walk
// would grow the stack with them.
#pragma once

#include <z3++.h>

#include <vector>

namespace argus::checker {

// The formula's terms, operands first, each once.
std::vector<z3::expr> postorder(const z3::expr& root);

// Whether `constant` occurs in `root`.
bool mentions(const z3::expr& root, const z3::expr& constant);

}  // namespace argus::checker

// Relaxations: cheaper formulas to ask before an exact query (internal to the
// checker). Each admits every model of the formula it is made from, so when
// it is unsatisfiable so is that formula; anything else is asked exactly.
#pragma once

#include <z3++.h>

#include <optional>

namespace argus::checker {

// `formula` with every nonlinear bit-vector term (a product of two unknowns,
// a division or remainder by an unknown) replaced by a fresh constant, the
// same term by the same constant. Bit-blasted, each such term is a multiplier
// or divider circuit; properties that only compare them to themselves (the
// tile a block computes from pid // group, on both sides of an equality) do
// not need it. Every model of `formula` is one of the result, so when the
// result is unsatisfiable so is `formula`. nullopt when there is none.
std::optional<z3::expr> abstractNonlinear(const z3::expr& formula);

// `formula` with every remainder by a constant abstracted (tag_remainders.cpp):
// nullopt when it has no remainder.
std::optional<z3::expr> abstractRemainders(const z3::expr& formula);

}  // namespace argus::checker

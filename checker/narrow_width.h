// Narrowing: the same question in fewer bits (internal to the checker).
//
// The checker asks about i32/i64 index arithmetic, and Z3 bit-blasts every
// multiplication and division into a circuit quadratic in the width. In a
// small launch (every size at most 256, or fixed at 200) no index comes near
// 2^31, so the question has the same answer over bit-vectors just wide
// enough for the values it can take. Interval arithmetic over the formula,
// from the bounds its own conjuncts put on the unknowns, finds that width.
#pragma once

#include <z3++.h>

#include <cstdint>
#include <optional>

namespace argus::checker {

// `formula` over bit-vectors of `width` bits, satisfiable exactly when
// `formula` is: every term wider than `width` is replaced by its low `width`
// bits, which is the term itself wherever the interval analysis shows that
// a division, a remainder, a comparison, a right shift, a bit extraction or
// a function's argument reads a value of at most `width - 2` bits and a sign
// (sums, products, bitwise operations and extensions keep their low bits
// whatever the values); each unknown keeps its bound as an assertion, and a
// function whose values are only compared for equality (a tag) is narrowed
// with them. nullopt when no width below
// `maxWidth` is provably enough (an unknown without a bound, a product that
// may wrap), the formula has an operation the narrowing does not model, or
// it has no multiplier or divider circuit to shrink (a product of two
// unknowns, a division or remainder by anything but a power of two).
// `false` when the bounds contradict each other. The unknowns of the result
// are new constants ("name!narrow").
std::optional<z3::expr> narrowedFormula(const z3::expr& formula, unsigned maxWidth = 24);

// Every unknown of `formula` (a bit-vector constant of 16 bits or more)
// between -bound and bound: what a search for a small model adds, so that
// the narrowed formula exists.
z3::expr unknownsWithin(const z3::expr& formula, int64_t bound);

}  // namespace argus::checker

// The same question over unbounded integers (internal to the checker).
//
// A question about i32 index arithmetic that bit-blasting cannot settle for
// every launch (a grouped tile order divides by a tile count computed from
// the runtime sizes) often has a short proof over the integers: the blocks'
// tile coordinates are quotients and remainders, and two blocks with equal
// coordinates have equal quotients, remainders and so program ids. Z3's
// arithmetic finds such proofs where the bit-blaster drowns in dividers.
// The integers agree with the IR's i32 arithmetic exactly in launches where
// no index computation wraps around, and that is all an answer over them
// says.
#pragma once

#include <z3++.h>

#include <optional>

namespace argus::checker {

// `formula` (over bit-vectors of at most 64 bits) read over the integers:
// every bit-vector term becomes its signed value (+, -, * without wrapping;
// C's truncating / and % with their exact quotient and remainder, a division
// by zero as the bit-vector one; an arithmetic shift right and a mask of low
// bits as floor division and remainder; extensions as the value itself), and
// each unknown keeps the range of its width. Where the bit-vector formula
// reads a value as unsigned (a zero extension, an unsigned comparison or
// division) or keeps its low bits (an extraction), the reading assumes the
// value is non-negative, or fits: the result holds that assumption as a
// conjunct. Unsatisfiable result: `formula` has no model in which no term
// wraps around (nothing about launches where one does). nullopt for an
// operation the reading does not model (a shift by a variable, a bitwise
// operation other than a low-bits mask, a concatenation).
std::optional<z3::expr> readAsIntegers(const z3::expr& formula);

}  // namespace argus::checker

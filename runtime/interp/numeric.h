// Element arithmetic of the interpreter, matching what the generated GPU code
// computes: f16/bf16/f8 are computed in f32 and rounded back (to nearest even),
// f32 in float, f64 in double; integers wrap and Div/Rem truncate toward zero.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/ir.h"
#include "support/diagnostic.h"

namespace argus::interp {

// One element of any dtype: floats live in `f` (already rounded to their dtype),
// integers and bools in `i` (normalized: sign-extended for signed dtypes,
// zero-extended for unsigned ones, 0/1 for bool; u64 keeps its bit pattern).
struct Elem {
  int64_t i = 0;
  double f = 0.0;
};

namespace num {

// Rounds `x` to the nearest value of float dtype `t` (ties to even). f8 formats
// saturate to their largest finite value (as PTX's .satfinite conversions do).
double roundToFloat(ir::DType t, double x);
// Wraps `x` to integer dtype `t` (or to 0/1 for bool).
int64_t normalizeInt(ir::DType t, int64_t x);

// Bit patterns as stored in memory (dtypeBits(t) wide; bool is one byte 0/1).
uint64_t encode(ir::DType t, const Elem& e);
Elem decode(ir::DType t, uint64_t bits);
int storageBytes(ir::DType t);

Elem fromDouble(ir::DType t, double v);  // rounds / truncates / wraps like a cast from f64
double toDouble(ir::DType t, const Elem& e);

// A run-time fault of an element operation: its diagnostic kind (RunDivisionByZero,
// RunShiftOutOfRange, RunOpNotDefined) and the arguments of its message but the last,
// which says where it happened (" at element ..." or nothing) and is the caller's.
struct ElemFault {
  DiagId id = DiagId::RunOpNotDefined;
  std::vector<std::string> args;
};

// Returns false and sets `fault` on a run-time fault (integer division by zero, a
// shift amount out of range, an operation the dtype does not have).
bool binary(ir::BinaryKind k, ir::DType t, const Elem& a, const Elem& b, Elem& out, ElemFault& fault);
// The same with the fault's message, without a place, in `error`.
bool binary(ir::BinaryKind k, ir::DType t, const Elem& a, const Elem& b, Elem& out, std::string& error);
bool compare(ir::CmpKind k, ir::DType t, const Elem& a, const Elem& b);
Elem unary(ir::UnaryKind k, ir::DType t, const Elem& a);
Elem fma(ir::DType t, const Elem& a, const Elem& b, const Elem& c);
Elem cast(ir::DType from, ir::DType to, const Elem& a);
// A Const op's value (its integer or float attribute, whichever the dtype uses).
Elem constant(ir::DType t, int64_t intValue, double floatValue);
// One step of a reduction: acc (op) x, with the dtype's arithmetic.
Elem reduceStep(ir::ReduceKind k, ir::DType t, const Elem& acc, const Elem& x);
bool isTruthy(ir::DType t, const Elem& e);
std::string format(ir::DType t, const Elem& e);

}  // namespace num
}  // namespace argus::interp

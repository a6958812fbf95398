// Counter-based random numbers: rand, randint and randint4x, Philox 4x32-10 as
// Triton's tl.rand / tl.randint / tl.randint4x compute it (counter (offset, 0, 0, 0),
// key (low and high words of the seed), ten rounds). They are spelled out here in
// the IR's integer operations, so the interpreter and the generated code agree bit
// for bit without a dedicated op; LLVM turns the 64-bit products into mul.hi/mul.wide.
#include "frontend/sema_internal.h"

namespace argus::sema::detail {

namespace {
constexpr uint64_t kRoundA = 0xD2511F53, kRoundB = 0xCD9E8D57;  // Philox's multipliers
constexpr uint64_t kKeyA = 0x9E3779B9, kKeyB = 0xBB67AE85;      // Weyl increments of the key
constexpr int kRounds = 10;
}  // namespace

std::array<ir::ValueId, 4> Analyzer::philox(ir::ValueId offsets, ir::ValueId seed, SourceRange range) {
  const ir::Type shape = fn_->values[offsets].type;  // a tile or an i32/u32 scalar
  auto as = [&](ir::ValueId v, ir::DType dt) {
    ir::Type t = fn_->values[v].type;
    if (t.dtype == dt) return v;
    t.dtype = dt;
    ir::Attrs attrs;
    ir::CastAttrs(attrs).to(dt);
    return b().make(ir::OpKind::Cast, {v}, t, range, attrs);
  };
  auto spread = [&](ir::ValueId scalar) {  // a scalar in the offsets' shape
    if (!shape.isTile()) return scalar;
    return b().make(ir::OpKind::Splat, {scalar}, ir::Type::tile(fn_->values[scalar].type.dtype, shape.layout), range);
  };
  auto op = [&](ir::BinaryKind k, ir::ValueId x, ir::ValueId y) { return emitBinary(k, x, y, range).id; };
  auto u32 = [&](uint64_t v) { return b().constInt(static_cast<int64_t>(v), ir::DType::U32, range); };

  ir::ValueId seed64 = as(seed, ir::DType::U64);
  ir::ValueId k0 = as(seed64, ir::DType::U32);
  ir::ValueId k1 = as(op(ir::BinaryKind::Shr, seed64, b().constInt(32, ir::DType::U64, range)), ir::DType::U32);
  ir::ValueId zero = spread(u32(0));
  std::array<ir::ValueId, 4> c{as(offsets, ir::DType::U32), zero, zero, zero};
  ir::ValueId roundA = spread(b().constInt(kRoundA, ir::DType::U64, range));
  ir::ValueId roundB = spread(b().constInt(kRoundB, ir::DType::U64, range));
  ir::ValueId shift = spread(b().constInt(32, ir::DType::U64, range));
  for (int round = 0; round < kRounds; ++round) {
    // (hi, lo) of the 64-bit products A * c0 and B * c2.
    ir::ValueId p0 = op(ir::BinaryKind::Mul, as(c[0], ir::DType::U64), roundA);
    ir::ValueId p2 = op(ir::BinaryKind::Mul, as(c[2], ir::DType::U64), roundB);
    ir::ValueId hi0 = as(op(ir::BinaryKind::Shr, p0, shift), ir::DType::U32);
    ir::ValueId hi2 = as(op(ir::BinaryKind::Shr, p2, shift), ir::DType::U32);
    std::array<ir::ValueId, 4> next{
        op(ir::BinaryKind::Xor, op(ir::BinaryKind::Xor, hi2, c[1]), spread(k0)), as(p2, ir::DType::U32),
        op(ir::BinaryKind::Xor, op(ir::BinaryKind::Xor, hi0, c[3]), spread(k1)), as(p0, ir::DType::U32)};
    c = next;
    if (round + 1 < kRounds) {
      k0 = op(ir::BinaryKind::Add, k0, u32(kKeyA));
      k1 = op(ir::BinaryKind::Add, k1, u32(kKeyB));
    }
  }
  return c;
}

Val Analyzer::builtinRandom(Builtin id, const ast::CallExpr& call, const std::vector<const ast::Argument*>& a) {
  const char* name = id == Builtin::Rand ? "rand" : id == Builtin::Randint ? "randint" : "randint4x";
  Val seed = eval(*a[0]->value);
  Val offsets = eval(*a[1]->value);
  if (seed.isError() || offsets.isError()) return Val::error();
  const ir::Type* st = typeOf(seed);
  bool seedOk = (seed.kind == Val::Kind::Const && seed.c.kind == Constant::Kind::Int) ||
                (st && st->isScalar() && ir::isInteger(st->dtype));
  if (!seedOk) {
    report(DiagId::BadArgument, a[0]->value->range, {"seed", name, "an integer scalar", describe(seed)});
    return Val::error();
  }
  const ir::Type* ot = typeOf(offsets);
  bool offsetsOk = (offsets.kind == Val::Kind::Const && offsets.c.kind == Constant::Kind::Int &&
                    canAdapt(offsets.c, ir::DType::I32)) ||
                   (ot && (ot->isTile() || ot->isScalar()) && (ot->dtype == ir::DType::I32 || ot->dtype == ir::DType::U32));
  if (!offsetsOk) {
    report(DiagId::BadArgument, a[1]->value->range,
           {"offsets", name, "an i32 or u32 tile (or scalar) of counters, such as arange(BLOCK) + start", describe(offsets)});
    return Val::error();
  }
  ir::ValueId s = materialize(seed, seed.kind == Val::Kind::Const ? std::optional(ir::DType::I64) : std::nullopt, call.range);
  ir::ValueId o = materialize(offsets, offsets.kind == Val::Kind::Const ? std::optional(ir::DType::I32) : std::nullopt, call.range);
  std::array<ir::ValueId, 4> words = philox(o, s, call.range);
  if (id == Builtin::Randint) return Val::value(words[0]);
  if (id == Builtin::Randint4x) {
    Val tuple;
    tuple.kind = Val::Kind::Tuple;
    for (ir::ValueId w : words) tuple.elems.push_back(Val::value(w));
    return tuple;
  }
  // rand: Triton's uint_to_uniform_float. The word as i32, negatives folded onto
  // the non-negatives (-x - 1 is ~x), scaled so that the largest stays below 1.
  ir::Type it = fn_->values[words[0]].type;
  it.dtype = ir::DType::I32;
  ir::Attrs toI32;
  ir::CastAttrs(toI32).to(ir::DType::I32);
  ir::ValueId x = b().make(ir::OpKind::Cast, {words[0]}, it, call.range, toI32);
  auto spread = [&](ir::ValueId scalar) {
    if (!it.isTile()) return scalar;
    return b().make(ir::OpKind::Splat, {scalar}, ir::Type::tile(fn_->values[scalar].type.dtype, it.layout), call.range);
  };
  ir::Attrs lt;
  ir::CompareAttrs(lt).cmpKind(ir::CmpKind::Lt);
  ir::Type boolType = it;
  boolType.dtype = ir::DType::Bool;
  ir::ValueId negative = b().make(ir::OpKind::Compare, {x, spread(b().constInt(0, ir::DType::I32, call.range))}, boolType,
                                  call.range, lt);
  ir::ValueId folded = b().make(ir::OpKind::Select, {negative, emitUnary(ir::UnaryKind::Not, x, call.range).id, x}, it,
                                call.range);
  ir::Type ft = it;
  ft.dtype = ir::DType::F32;
  ir::Attrs toF32;
  ir::CastAttrs(toF32).to(ir::DType::F32);
  ir::ValueId f = b().make(ir::OpKind::Cast, {folded}, ft, call.range, toF32);
  return emitBinary(ir::BinaryKind::Mul, f, spread(b().constFloat(4.6566127342e-10, ir::DType::F32, call.range)), call.range);
}

}  // namespace argus::sema::detail

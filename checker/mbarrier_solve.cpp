// Solver helpers of the mbarrier check: divisions by constants rewritten for
// the bit-blaster, the constants of a formula, and the thread that touches an
// element (for counterexamples).
#include <functional>
#include <map>

#include "checker/mbarrier_events.h"
#include "ir/ops.h"

namespace argus::checker {


using ir::OpKind;

// Stage and parity indices divide by constants ((kt + 2) % 3, (kt / 3) % 2). Bit-blasted, each
// division is a divider circuit, and relating a dozen of them across the window takes seconds.
// C's truncating division by a constant c > 0 is exactly t = q * c + r with r in [0, c) when
// t >= 0 and in (-c, 0] otherwise (q * c cannot overflow): fresh q, r per dividend, and, for
// two dividends that differ by a constant, the implied relation of their remainders.
z3::expr withoutDivisions(z3::context& ctx, const z3::expr& formula) {
  std::map<unsigned, z3::expr> memo;
  struct Division { z3::expr t, q, r; int64_t c; };
  std::vector<Division> divisions;
  std::function<z3::expr(const z3::expr&)> walk = [&](const z3::expr& e) -> z3::expr {
    if (auto it = memo.find(e.id()); it != memo.end()) return it->second;
    if (!e.is_app() || e.num_args() == 0) { memo.emplace(e.id(), e); return e; }
    z3::expr_vector args(ctx);
    for (unsigned i = 0; i < e.num_args(); ++i) args.push_back(walk(e.arg(i)));
    Z3_decl_kind kind = e.decl().decl_kind();
    bool div = kind == Z3_OP_BSDIV || kind == Z3_OP_BSDIV_I, rem = kind == Z3_OP_BSREM || kind == Z3_OP_BSREM_I;
    int64_t c = 0;
    uint64_t bits = 0;
    z3::expr out = e;
    if ((div || rem) && args.size() == 2 && args[1].is_numeral_u64(bits) && bits > 0 && bits < (1u << 30)) {
      c = static_cast<int64_t>(bits);
      const Division* found = nullptr;
      for (const Division& d : divisions)
        if (d.c == c && z3::eq(d.t, args[0])) found = &d;
      if (!found) {
        std::string n = std::to_string(divisions.size());
        divisions.push_back({args[0], ctx.bv_const(("quot" + n).c_str(), 32), ctx.bv_const(("rem" + n).c_str(), 32), c});
        found = &divisions.back();
      }
      out = div ? found->q : found->r;
    } else if (e.num_args() > 0) {
      out = e.decl()(args);
    }
    memo.emplace(e.id(), out);
    return out;
  };
  z3::expr body = walk(formula);
  for (size_t i = 0; i < divisions.size(); ++i) {
    const Division& d = divisions[i];
    z3::expr c = ctx.bv_val(d.c, 32);
    body = body && z3::sext(d.t, 32) == z3::sext(d.q, 32) * ctx.bv_val(d.c, 64) + z3::sext(d.r, 32) &&
           z3::ite(d.t >= 0, d.r >= 0 && d.r < c, d.r <= 0 && d.r > -c);
    for (size_t k = 0; k < i; ++k) {
      const Division& o = divisions[k];
      if (o.c != d.c) continue;
      z3::expr delta = (d.t - o.t).simplify();
      uint64_t db = 0;
      if (!delta.is_numeral_u64(db)) continue;
      int64_t shift = ((static_cast<int32_t>(static_cast<uint32_t>(db)) % d.c) + d.c) % d.c;
      z3::expr sum = o.r + ctx.bv_val(shift, 32);
      z3::expr wrapped = z3::ite(sum >= c, sum - c, sum);
      body = body && z3::implies(d.t >= 0 && o.t >= 0, d.r == wrapped);
    }
  }
  return body;
}

void collectConstants(const z3::expr& e, std::set<std::string>& names, std::set<unsigned>& seen) {
  if (!seen.insert(e.id()).second) return;
  if (e.is_const() && e.decl().decl_kind() == Z3_OP_UNINTERPRETED) {
    names.insert(e.decl().name().str());
    return;
  }
  if (e.is_app())
    for (unsigned i = 0; i < e.num_args(); ++i) collectConstants(e.arg(i), names, seen);
}

// The lowest thread (and value) that reads or writes `element` through the access `e`.
Toucher lowestToucher(const ir::Function& fn, const MbEvent& e, const std::vector<int64_t>& element,
                    const std::vector<int64_t>& lo) {
  Toucher out;
  const ir::Op& op = *e.op;
  const std::vector<int64_t>& viewShape = fn.typeOf(e.view).shape;
  size_t r = element.size(), k = std::min(viewShape.size(), r);
  std::vector<int64_t> tile;
  for (size_t d = r - k; d < r; ++d) tile.push_back(element[d] - lo[d]);
  // Who touches what: the op's declared effect on this view (ir/ops.def).
  std::optional<ir::Layout> found;
  bool primary = false;
  for (const ir::MemoryEffect& effect : ir::memoryEffects(fn, op)) {
    if (effect.view != e.view || effect.decl->elements == ir::EffectElements::AsyncCopyChunks) continue;
    found = ir::effectLayout(fn, op, *effect.decl);
    primary = effect.decl->elements == ir::EffectElements::StoredValueLayout;
    if (found) break;
  }
  if (!found) return out;
  const ir::Layout& layout = *found;
  ir::Distribution dist = ir::Distribution::of(layout, fn.numWarps);
  for (int64_t t = 0; t < fn.numThreads(); ++t) {
    if (primary && !dist.isPrimaryOwner(t)) continue;
    for (int64_t v = 0; v < dist.valuesPerThread; ++v) {
      std::vector<int64_t> c = dist.coordinate(t, v);
      bool match = false;
      if (op.kind != OpKind::Dot) match = c == tile;
      else if (c.size() == 2 && tile.size() == 2) {
        if (e.dotOperand == 0) match = c[0] == tile[0];
        else if (ir::DotOp(op).transB()) match = c[1] == tile[0];
        else match = c[1] == tile[1];
      }
      if (match) return Toucher{t, v};
    }
  }
  return out;
}

}  // namespace argus::checker

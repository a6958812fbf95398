// Remainders abstracted, for the tag flow's queries (TagFlow::check).
//
// A ring's stage indices are remainders (j - d + c) % S of consecutive
// iterations. Bit-blasted, each is a divider circuit, and proving facts that
// relate them ("stage (j - 1) % S and stage (j - 2) % S differ") asks the SAT
// solver to reason through those circuits: seconds for S = 5. Here every
// remainder x % S by a constant S >= 2 becomes a fresh variable m with the
// facts the induction needs, all true of the real remainder:
//   x >= 0                      =>  0 <= m < S
//   0 <= x < S                  =>  m == x
//   x, y >= 0, x - y == delta   =>  m_x == (m_y + delta) mod S   (delta a constant)
// The abstraction admits every model of the exact formula, so when it is
// unsatisfiable so is the exact one; anything else is asked again exactly.
#include "checker/relaxations.h"

#include <unordered_set>

namespace argus::checker {

namespace {

struct Remainder {
  z3::expr term, dividend;
  int64_t divisor;
};

bool numeral(const z3::expr& e, int64_t& out) {
  uint64_t bits = 0;
  if (!e.is_numeral() || !e.is_numeral_u64(bits)) return false;
  out = static_cast<int32_t>(static_cast<uint32_t>(bits));
  return true;
}

// x - ((x + ((x >> 31) & (2^k - 1))) >> k << k): TagFlow::divide's remainder by 2^k.
bool shiftRemainder(const z3::expr& e, z3::expr& dividend, int64_t& divisor) {
  if (!e.is_app() || e.decl().decl_kind() != Z3_OP_BSUB || e.num_args() != 2) return false;
  z3::expr x = e.arg(0), shifted = e.arg(1);
  int64_t k = 0, mask = 0, sign = 0;
  if (!shifted.is_app() || shifted.decl().decl_kind() != Z3_OP_BSHL || !numeral(shifted.arg(1), k)) return false;
  z3::expr q = shifted.arg(0);
  if (!q.is_app() || q.decl().decl_kind() != Z3_OP_BASHR || q.num_args() != 2 || !numeral(q.arg(1), sign) || sign != k)
    return false;
  z3::expr sum = q.arg(0);
  if (!sum.is_app() || sum.decl().decl_kind() != Z3_OP_BADD || sum.num_args() != 2 || !z3::eq(sum.arg(0), x)) return false;
  z3::expr bias = sum.arg(1);
  if (!bias.is_app() || bias.decl().decl_kind() != Z3_OP_BAND || bias.num_args() != 2 || !numeral(bias.arg(1), mask))
    return false;
  // The bias must be the dividend's sign spread over k bits, or the term is no remainder.
  z3::expr spread = bias.arg(0);
  int64_t bits = 0;
  if (!spread.is_app() || spread.decl().decl_kind() != Z3_OP_BASHR || spread.num_args() != 2 ||
      !z3::eq(spread.arg(0), x) || !numeral(spread.arg(1), bits) || bits != 31)
    return false;
  if (k <= 0 || k >= 30 || mask != (int64_t{1} << k) - 1) return false;
  dividend = x;
  divisor = int64_t{1} << k;
  return true;
}

void visit(const z3::expr& e, std::vector<Remainder>& out);

// Every remainder of `root`, operands before the operations that use them: an
// explicit stack, since a chain of dependent scalars makes terms as deep as long.
void collect(const z3::expr& root, std::unordered_set<unsigned>& seen, std::vector<Remainder>& out) {
  std::vector<std::pair<z3::expr, unsigned>> stack;
  if (seen.insert(root.id()).second && root.is_app()) stack.emplace_back(root, 0);
  while (!stack.empty()) {
    auto& [e, next] = stack.back();
    if (next < e.num_args()) {
      z3::expr child = e.arg(next++);
      if (seen.insert(child.id()).second && child.is_app()) stack.emplace_back(child, 0);
      continue;
    }
    z3::expr done = e;
    stack.pop_back();
    visit(done, out);
  }
}

void visit(const z3::expr& e, std::vector<Remainder>& out) {
  Z3_decl_kind kind = e.decl().decl_kind();
  int64_t divisor = 0;
  if ((kind == Z3_OP_BSREM || kind == Z3_OP_BSREM_I) && e.num_args() == 2 && numeral(e.arg(1), divisor) && divisor >= 2 &&
      divisor < (int64_t{1} << 20)) {
    out.push_back(Remainder{e, e.arg(0), divisor});
    return;
  }
  z3::expr dividend = e;
  if (e.is_bv() && e.get_sort().bv_size() == 32 && shiftRemainder(e, dividend, divisor))
    out.push_back(Remainder{e, dividend, divisor});
}

}  // namespace

std::optional<z3::expr> abstractRemainders(const z3::expr& formula) {
  std::unordered_set<unsigned> seen;
  std::vector<Remainder> found;
  collect(formula, seen, found);
  if (found.empty()) return std::nullopt;
  z3::context& ctx = formula.ctx();
  z3::expr_vector from(ctx), to(ctx);
  for (size_t i = 0; i < found.size(); ++i) {
    from.push_back(found[i].term);
    to.push_back(ctx.bv_const(("remainder!" + std::to_string(i)).c_str(), 32));
  }
  auto bv = [&](int64_t v) { return ctx.bv_val(v, 32); };
  z3::expr facts = ctx.bool_val(true);
  for (size_t i = 0; i < found.size(); ++i) {
    const Remainder& r = found[i];
    z3::expr m = to[static_cast<unsigned>(i)], x = r.dividend;
    facts = facts && z3::implies(x >= 0, m >= 0 && m < bv(r.divisor));
    facts = facts && z3::implies(x >= 0 && x < bv(r.divisor), m == x);
    for (size_t k = 0; k < found.size(); ++k) {
      if (k == i || found[k].divisor != r.divisor) continue;
      int64_t delta = 0;
      if (!numeral((x - found[k].dividend).simplify(), delta) || delta <= 0) continue;
      int64_t shift = delta % r.divisor;
      z3::expr other = to[static_cast<unsigned>(k)], sum = other + bv(shift);
      z3::expr wrapped = z3::ite(sum >= bv(r.divisor), sum - bv(r.divisor), sum);
      facts = facts && z3::implies(x >= 0 && found[k].dividend >= 0, m == wrapped);
    }
  }
  z3::expr copy = formula && facts;
  return copy.substitute(from, to);
}

}  // namespace argus::checker

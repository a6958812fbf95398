#include "checker/relaxations.h"

#include <string>
#include <unordered_map>
#include <vector>

namespace argus::checker {

namespace {

bool isDivision(Z3_decl_kind kind) {
  switch (kind) {
    case Z3_OP_BSDIV: case Z3_OP_BUDIV: case Z3_OP_BSREM: case Z3_OP_BUREM: case Z3_OP_BSMOD:
    case Z3_OP_BSDIV_I: case Z3_OP_BUDIV_I: case Z3_OP_BSREM_I: case Z3_OP_BUREM_I: case Z3_OP_BSMOD_I:
      return true;
    default:
      return false;
  }
}

// Walks the formula's DAG once, operands before the terms that use them (an
// explicit stack: terms are as deep as a kernel's chain of scalars is long),
// and records for each term whether it has no unknown (a constant, however
// written: sign_extend of a numeral counts) and the nonlinear terms.
class NonlinearTerms {
 public:
  explicit NonlinearTerms(const z3::expr& root) {
    std::vector<std::pair<z3::expr, unsigned>> stack;
    if (root.is_app()) stack.emplace_back(root, 0);
    while (!stack.empty()) {
      auto& [e, next] = stack.back();
      if (next < e.num_args()) {
        z3::expr child = e.arg(next++);
        if (!constant_.count(child.id()) && child.is_app()) stack.emplace_back(child, 0);
        continue;
      }
      z3::expr done = e;
      stack.pop_back();
      if (!constant_.count(done.id())) visit(done);
    }
  }
  const std::vector<z3::expr>& found() const { return found_; }

 private:
  void visit(const z3::expr& e) {
    bool constant = e.num_args() > 0 || e.is_numeral() || e.is_true() || e.is_false();
    for (unsigned i = 0; i < e.num_args() && constant; ++i) constant = isConstant(e.arg(i));
    constant_[e.id()] = constant;
    if (constant || !e.is_bv() || e.num_args() != 2) return;
    Z3_decl_kind kind = e.decl().decl_kind();
    bool product = kind == Z3_OP_BMUL && !isConstant(e.arg(0)) && !isConstant(e.arg(1));
    if (product || (isDivision(kind) && !isConstant(e.arg(1)))) found_.push_back(e);
  }
  bool isConstant(const z3::expr& e) const {
    auto it = constant_.find(e.id());
    return it != constant_.end() && it->second;
  }
  std::unordered_map<unsigned, bool> constant_;
  std::vector<z3::expr> found_;
};

}  // namespace

std::optional<z3::expr> abstractNonlinear(const z3::expr& formula) {
  NonlinearTerms terms(formula);
  if (terms.found().empty()) return std::nullopt;
  z3::context& ctx = formula.ctx();
  z3::expr_vector from(ctx), to(ctx);
  for (const z3::expr& t : terms.found()) {
    from.push_back(t);
    to.push_back(ctx.bv_const(("nonlinear!" + std::to_string(to.size())).c_str(), t.get_sort().bv_size()));
  }
  return z3::expr(formula).substitute(from, to);
}

}  // namespace argus::checker

#include "checker/formula_walk.h"

#include <unordered_set>
#include <utility>

namespace argus::checker {

std::vector<z3::expr> postorder(const z3::expr& root) {
  std::vector<z3::expr> order;
  std::unordered_set<unsigned> seen{root.id()};
  std::vector<std::pair<z3::expr, unsigned>> stack;
  stack.emplace_back(root, 0);
  while (!stack.empty()) {
    auto& [e, next] = stack.back();
    if (e.is_app() && next < e.num_args()) {
      z3::expr child = e.arg(next++);
      if (seen.insert(child.id()).second) stack.emplace_back(child, 0);
      continue;
    }
    order.push_back(e);
    stack.pop_back();
  }
  return order;
}

bool mentions(const z3::expr& root, const z3::expr& constant) {
  std::unordered_set<unsigned> seen{root.id()};
  std::vector<z3::expr> work{root};
  while (!work.empty()) {
    z3::expr e = work.back();
    work.pop_back();
    if (z3::eq(e, constant)) return true;
    if (!e.is_app()) continue;
    for (unsigned i = 0; i < e.num_args(); ++i) {
      z3::expr child = e.arg(i);
      if (seen.insert(child.id()).second) work.push_back(child);
    }
  }
  return false;
}

}  // namespace argus::checker

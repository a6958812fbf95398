// stage_operands_in_shared: a GEMM whose operands go from global memory
// straight into registers (examples/agent/gemm_naive.ag) becomes one that
// copies each K tile of A and B into shared memory and multiplies the shared
// tiles with dot() (examples/gemm.ag):
//
//     for kt in range(cdiv(K, BK)):
//         for kk in range(BK):
//             a = load(A.tile((BM, 1))[i, kt * BK + kk])
//             b = load(B.tile((1, BN))[kt * BK + kk, j])
//             acc = acc + cast(a, f32) * cast(b, f32)
// becomes
//     for kt in range(cdiv(K, BK)):
//         copy(a_s, A.tile((BM, BK))[i, kt])
//         copy(b_s, B.tile((BK, BN))[kt, j])
//         barrier()
//         acc = dot(a_s, b_s, acc)
//         barrier()
//
// Both compute acc + sum over k of A[m, k] * B[k, n] for the same k range (a
// view past the edge reads zeros in both), so the result is unchanged.
//
// B stored (N, K) (a linear layer's weight W, examples/agent/gemm_naive_nt.ag)
// is loaded as a column, `w = load(W.tile((BN, 1))[j, kt * BK + kk])`, and
// multiplied as the row `reshape(w, (1, BN))`; it is staged as it is stored,
// `w_s = shared(dtype, (BN, BK))` filled by `W.tile((BN, BK))[j, kt]`, and
// read transposed: `dot(a_s, w_s, acc, trans_b=True)`.
#include "agent/rewrite_internal.h"

namespace argus::agent::detail {

namespace {

// `T.tile((E0, E1))[I0, I1]`: the pieces of a view of a global tensor.
struct TileView {
  std::string tensor;
  const ast::Expr* extent[2] = {nullptr, nullptr};
  const ast::Expr* index[2] = {nullptr, nullptr};
};

std::optional<TileView> asTileView(const ast::Expr* e) {
  if (!e || e->kind != ast::ExprKind::Subscript) return std::nullopt;
  const auto& sub = static_cast<const ast::SubscriptExpr&>(*e);
  const ast::CallExpr* tile = asCall(sub.base.get());
  if (!tile || sub.indices.size() != 2 || !tile->callee || tile->callee->kind != ast::ExprKind::Attribute)
    return std::nullopt;
  const auto& attr = static_cast<const ast::AttributeExpr&>(*tile->callee);
  const ast::NameExpr* tensor = asName(attr.base.get());
  const ast::Argument* shape = positionalArg(*tile, 0);
  if (attr.name != "tile" || !tensor || !shape || shape->value->kind != ast::ExprKind::Tuple) return std::nullopt;
  const auto& tuple = static_cast<const ast::TupleExpr&>(*shape->value);
  if (tuple.elements.size() != 2) return std::nullopt;
  TileView v;
  v.tensor = tensor->name;
  for (int d = 0; d < 2; ++d) {
    v.extent[d] = tuple.elements[static_cast<size_t>(d)].get();
    v.index[d] = sub.indices[static_cast<size_t>(d)].get();
  }
  return v;
}

bool isOne(const ast::Expr* e) {
  return e && e->kind == ast::ExprKind::Int && static_cast<const ast::IntExpr*>(e)->value == 1;
}

// `name = load(view)` inside the inner loop.
struct OperandLoad {
  std::string name;
  TileView view;
};

std::optional<OperandLoad> asOperandLoad(const ast::Stmt& s) {
  if (s.kind != ast::StmtKind::Assign) return std::nullopt;
  const auto& a = static_cast<const ast::AssignStmt&>(s);
  const ast::NameExpr* target = a.targets.size() == 1 ? asName(a.targets[0].get()) : nullptr;
  const ast::CallExpr* load = asCall(a.value.get(), "load");
  if (!target || !load || load->args.size() != 1) return std::nullopt;
  std::optional<TileView> view = asTileView(load->args[0].value.get());
  if (!view) return std::nullopt;
  return OperandLoad{target->name, *view};
}

// `x`, `cast(x, f32)`, or either with x as `reshape(x, (1, E))` (a column turned
// into a row: `transposed`).
std::string operandName(const ast::Expr* e, bool* transposed = nullptr) {
  auto unwrap = [&](const char* fn) {
    if (const ast::CallExpr* c = asCall(e, fn); c && c->args.size() == 2) {
      const ast::Expr* shape = c->args[1].value.get();
      if (std::string(fn) == "reshape") {
        if (!shape || shape->kind != ast::ExprKind::Tuple) return;
        const auto& t = static_cast<const ast::TupleExpr&>(*shape);
        if (t.elements.size() != 2 || !t.elements[0] || t.elements[0]->kind != ast::ExprKind::Int ||
            static_cast<const ast::IntExpr&>(*t.elements[0]).value != 1)
          return;
        if (transposed) *transposed = true;
      }
      e = c->args[0].value.get();
    }
  };
  unwrap("cast");
  unwrap("reshape");
  unwrap("cast");
  const ast::NameExpr* n = asName(e);
  return n ? n->name : "";
}

// `acc = acc + x * y`, `acc = x * y + acc` or `acc += x * y`: the names acc, x, y,
// and which of x and y is a column made a row (reshape(..., (1, E))).
bool asOuterProductUpdate(const ast::Stmt& s, std::string& acc, std::string& x, std::string& y, bool transposed[2]) {
  const ast::Expr* product = nullptr;
  if (s.kind == ast::StmtKind::Assign) {
    const auto& a = static_cast<const ast::AssignStmt&>(s);
    const ast::NameExpr* target = a.targets.size() == 1 ? asName(a.targets[0].get()) : nullptr;
    if (!target || !a.value || a.value->kind != ast::ExprKind::Binary) return false;
    const auto& sum = static_cast<const ast::BinaryExpr&>(*a.value);
    if (sum.op != ast::BinaryOp::Add) return false;
    const ast::NameExpr* l = asName(sum.lhs.get());
    const ast::NameExpr* r = asName(sum.rhs.get());
    if (l && l->name == target->name) product = sum.rhs.get();
    else if (r && r->name == target->name) product = sum.lhs.get();
    acc = target->name;
  } else if (s.kind == ast::StmtKind::AugAssign) {
    const auto& a = static_cast<const ast::AugAssignStmt&>(s);
    const ast::NameExpr* target = asName(a.target.get());
    if (!target || a.op != ast::BinaryOp::Add) return false;
    product = a.value.get();
    acc = target->name;
  }
  if (!product || product->kind != ast::ExprKind::Binary) return false;
  const auto& mul = static_cast<const ast::BinaryExpr&>(*product);
  if (mul.op != ast::BinaryOp::Mul) return false;
  x = operandName(mul.lhs.get(), &transposed[0]);
  y = operandName(mul.rhs.get(), &transposed[1]);
  return !x.empty() && !y.empty();
}

// `OUT * BK + IN` (either operand order), with BK written as the inner loop's extent.
bool isKIndex(const ParsedKernel& p, const ast::Expr* e, const std::string& outer, const std::string& inner,
              const std::string& tileK) {
  if (!e || e->kind != ast::ExprKind::Binary) return false;
  const auto& add = static_cast<const ast::BinaryExpr&>(*e);
  if (add.op != ast::BinaryOp::Add) return false;
  const ast::Expr* mulSide = add.lhs.get();
  const ast::NameExpr* in = asName(add.rhs.get());
  if (!in) {
    in = asName(add.lhs.get());
    mulSide = add.rhs.get();
  }
  if (!in || in->name != inner || !mulSide || mulSide->kind != ast::ExprKind::Binary) return false;
  const auto& mul = static_cast<const ast::BinaryExpr&>(*mulSide);
  if (mul.op != ast::BinaryOp::Mul || !mul.lhs || !mul.rhs) return false;
  const ast::NameExpr* l = asName(mul.lhs.get());
  const ast::NameExpr* r = asName(mul.rhs.get());
  return (l && l->name == outer && p.slice(*mul.rhs) == tileK) || (r && r->name == outer && p.slice(*mul.lhs) == tileK);
}

}  // namespace

std::optional<OuterProductLoop> findOuterProductLoop(const ParsedKernel& p, std::string& whyNot) {
  std::vector<const ast::ForStmt*> loops;
  collectLoops(p.kernel->body, loops);
  const std::map<std::string, int64_t> consts = constIntDefaults(*p.kernel);
  whyNot = "no loop loads register tiles of A and B and accumulates their products (the shape of "
           "examples/agent/gemm_naive.ag)";
  for (const ast::ForStmt* outer : loops) {
    const ast::NameExpr* outerVar = asName(outer->target.get());
    if (!outerVar || !asCall(outer->iter.get(), "range")) continue;
    for (const ast::StmtPtr& s : outer->body) {
      if (s->kind != ast::StmtKind::For) continue;
      const auto& inner = static_cast<const ast::ForStmt&>(*s);
      const ast::NameExpr* innerVar = asName(inner.target.get());
      const ast::CallExpr* range = asCall(inner.iter.get(), "range");
      if (!innerVar || !range || range->args.size() != 1 || inner.body.size() != 3) continue;
      std::optional<OperandLoad> l0 = asOperandLoad(*inner.body[0]), l1 = asOperandLoad(*inner.body[1]);
      std::string acc, x, y;
      bool transposed[2] = {false, false};
      if (!l0 || !l1 || !asOuterProductUpdate(*inner.body[2], acc, x, y, transposed)) continue;
      // The column of A is (BM, 1); B's row (1, BN), or its column (BN, 1) of W stored
      // (N, K), made a row in the product.
      const std::string rowOperand = transposed[0] ? x : transposed[1] ? y : "";
      const bool transB = !rowOperand.empty();
      const OperandLoad* b = transB ? (l0->name == rowOperand ? &*l0 : &*l1) : (isOne(l0->view.extent[0]) ? &*l0 : &*l1);
      const OperandLoad* a = b == &*l0 ? &*l1 : &*l0;
      const int bK = transB ? 1 : 0;  // the axis of B's view that walks K
      if (!isOne(a->view.extent[1]) || !isOne(b->view.extent[bK])) continue;
      if (!((x == a->name && y == b->name) || (x == b->name && y == a->name))) continue;
      if (transposed[0] && transposed[1]) continue;
      const std::string tileK = p.slice(*range->args[0].value);
      if (!isKIndex(p, a->view.index[1], outerVar->name, innerVar->name, tileK) ||
          p.slice(*a->view.index[1]) != p.slice(*b->view.index[bK])) {
        whyNot = "the operands are indexed along K by '" + p.slice(*a->view.index[1]) + "', not '" + outerVar->name +
                 " * " + tileK + " + " + innerVar->name + "'";
        continue;
      }
      if (!evalInt(*a->view.extent[0], consts) || !evalInt(*b->view.extent[1 - bK], consts) ||
          !evalInt(*range->args[0].value, consts)) {
        whyNot = "the tile extents are not compile-time constants, so they cannot size shared buffers";
        continue;
      }
      OuterProductLoop out;
      out.outer = outer;
      out.inner = &inner;
      out.tensorA = a->view.tensor;
      out.tensorB = b->view.tensor;
      out.rowIndex = p.slice(*a->view.index[0]);
      out.colIndex = p.slice(*b->view.index[1 - bK]);
      out.tileM = p.slice(*a->view.extent[0]);
      out.tileN = p.slice(*b->view.extent[1 - bK]);
      out.transB = transB;
      out.tileK = tileK;
      out.accName = acc;
      return out;
    }
  }
  return std::nullopt;
}

RewriteResult stageOperandsInShared(const std::string& source, const nlohmann::json& /*args*/) {
  std::string why;
  std::optional<ParsedKernel> p = parseKernel(source, why);
  if (!p) return notApplied(why);
  if (!dotCalls(*p->kernel).empty())
    return notApplied("the kernel already multiplies shared tiles with dot(); its operands are staged");
  std::optional<OuterProductLoop> loop = findOuterProductLoop(*p, why);
  if (!loop) return notApplied(why);
  std::optional<std::string> dtA = tensorDtype(*p->kernel, loop->tensorA);
  std::optional<std::string> dtB = tensorDtype(*p->kernel, loop->tensorB);
  if (!dtA || !dtB) return notApplied("'" + loop->tensorA + "' and '" + loop->tensorB + "' must be Tensor parameters");
  if (*dtA != *dtB)
    return notApplied("dot() needs A and B of one dtype, but they are " + *dtA + " and " + *dtB);
  if (*dtA != "f32" && *dtA != "bf16" && *dtA != "f16" && *dtA != "f64")
    return notApplied("dot() multiplies float tiles, but the operands are " + *dtA);

  const std::string aBuf = freshName(*p->kernel, "a_s"), bBuf = freshName(*p->kernel, "b_s");
  const std::string& text = *p->text;
  const std::string outerVar = static_cast<const ast::NameExpr&>(*loop->outer->target).name;
  std::vector<Edit> edits;
  // The buffers, at the top of the kernel body (shared() belongs at the top level).
  const ast::Stmt& first = *p->kernel->body.front();
  const std::string bodyIndent = indentAt(text, first.range.begin);
  uint32_t at = lineStartOf(text, first.range.begin);
  const std::string bShape = loop->transB ? loop->tileN + ", " + loop->tileK : loop->tileK + ", " + loop->tileN;
  edits.push_back({at, at,
                   bodyIndent + aBuf + " = shared(" + *dtA + ", (" + loop->tileM + ", " + loop->tileK + "))\n" +
                       bodyIndent + bBuf + " = shared(" + *dtB + ", (" + bShape + "))\n"});
  // The inner loop becomes copy, barrier, dot, barrier.
  const std::string ind = indentAt(text, loop->inner->range.begin);
  std::string staged = "copy(" + aBuf + ", " + loop->tensorA + ".tile((" + loop->tileM + ", " + loop->tileK + "))[" +
                       loop->rowIndex + ", " + outerVar + "])\n";
  const std::string bIndex = loop->transB ? loop->colIndex + ", " + outerVar : outerVar + ", " + loop->colIndex;
  staged += ind + "copy(" + bBuf + ", " + loop->tensorB + ".tile((" + bShape + "))[" + bIndex + "])\n";
  staged += ind + "barrier()\n";
  staged += ind + loop->accName + " = dot(" + aBuf + ", " + bBuf + ", " + loop->accName +
            (loop->transB ? ", trans_b=True" : "") + ")\n";
  staged += ind + "barrier()";
  edits.push_back({loop->inner->range.begin, blockEnd(*loop->inner), staged});
  return finishRewrite(source, std::move(edits),
                       "stage " + loop->tensorA + " and " + loop->tensorB + " tiles in shared buffers " + aBuf + " (" +
                           loop->tileM + " x " + loop->tileK + ") and " + bBuf + " (" + bShape + "); multiply them with dot()" +
                           (loop->transB ? " reading " + bBuf + " transposed" : ""));
}

}  // namespace argus::agent::detail

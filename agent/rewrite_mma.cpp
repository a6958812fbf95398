// tensor_core_mma: the accumulator of a dot() on 16-bit shared operands takes
// the mma layout, so the dot runs on tensor cores (ldmatrix + mma.sync), with
// the warp grid as new WM/WN parameters and `warps=WM * WN` (language.md §7).
// swizzle_shared: the dot's shared operands get the swizzle that keeps
// ldmatrix free of bank conflicts (as examples/gemm_tc.ag).
#include <bit>

#include "agent/rewrite_internal.h"

namespace argus::agent::detail {

namespace {

// The dot's operand buffers: `a_s` of `dot(a_s, b_s, acc)` or `a_s[s]`.
struct DotOperands {
  const ast::CallExpr* dot = nullptr;
  const ast::CallExpr* decl[2] = {nullptr, nullptr};  // shared(...) of a and b
  std::string name[2];
};

std::optional<DotOperands> findDotOperands(const ParsedKernel& p, std::string& whyNot) {
  std::vector<const ast::CallExpr*> dots = dotCalls(*p.kernel);
  if (dots.empty()) {
    whyNot = "the kernel has no dot(); stage its operands in shared memory first (stage_operands_in_shared)";
    return std::nullopt;
  }
  DotOperands out;
  out.dot = dots.front();
  for (size_t k = 0; k < 2; ++k) {
    const ast::Argument* arg = positionalArg(*out.dot, k);
    const ast::NameExpr* root = arg ? rootName(arg->value.get()) : nullptr;
    out.decl[k] = root ? sharedDecl(*p.kernel, root->name) : nullptr;
    if (!out.decl[k]) {
      whyNot = std::string("operand ") + (k ? "b" : "a") + " of the dot is not a shared buffer declared in the kernel";
      return std::nullopt;
    }
    out.name[k] = root->name;
  }
  return out;
}

std::string dtypeOf(const ast::CallExpr& sharedCall) {
  const ast::Argument* a = positionalArg(sharedCall, 0);
  const ast::NameExpr* n = a ? asName(a->value.get()) : nullptr;
  return n ? n->name : "";
}

// The extents of a shared(dtype, (d0, d1, ...)) declaration.
std::optional<std::vector<int64_t>> sharedShape(const ast::CallExpr& sharedCall, const std::map<std::string, int64_t>& consts) {
  const ast::Argument* shape = positionalArg(sharedCall, 1);
  if (!shape || shape->value->kind != ast::ExprKind::Tuple) return std::nullopt;
  std::vector<int64_t> out;
  for (const auto& e : static_cast<const ast::TupleExpr&>(*shape->value).elements) {
    std::optional<int64_t> v = evalInt(*e, consts);
    if (!v || *v <= 0) return std::nullopt;
    out.push_back(*v);
  }
  return out;
}

int64_t elementBytes(const std::string& dtype) {
  if (dtype == "f64" || dtype == "i64" || dtype == "u64") return 8;
  if (dtype == "f32" || dtype == "i32" || dtype == "u32") return 4;
  if (dtype == "f16" || dtype == "bf16" || dtype == "i16" || dtype == "u16") return 2;
  return 1;
}

int log2Exact(int64_t v) { return std::countr_zero(static_cast<uint64_t>(v)); }

// Whether `(B, M, S)` as written (literals or const parameters) is `want`.
bool sameSwizzle(const ast::Expr& written, const std::array<int, 3>& want, const std::map<std::string, int64_t>& consts) {
  if (written.kind != ast::ExprKind::Tuple) return false;
  const auto& tuple = static_cast<const ast::TupleExpr&>(written);
  if (tuple.elements.size() != 3) return false;
  for (size_t i = 0; i < 3; ++i) {
    std::optional<int64_t> v = evalInt(*tuple.elements[i], consts);
    if (!v || *v != want[i]) return false;
  }
  return true;
}

}  // namespace

RewriteResult tensorCoreMma(const std::string& source, const nlohmann::json& args) {
  int64_t wm = 2, wn = 2;
  if (args.is_object()) {
    if (args.contains("WM")) wm = args["WM"].get<int64_t>();
    if (args.contains("WN")) wn = args["WN"].get<int64_t>();
  }
  const int64_t warps = wm * wn;
  if (wm < 1 || wn < 1 || warps > 32 || !std::has_single_bit(static_cast<uint64_t>(warps)))
    return notApplied("WM x WN = " + std::to_string(wm) + " x " + std::to_string(wn) +
                      " warps: the product must be a power of two from 1 to 32");
  std::string why;
  std::optional<ParsedKernel> p = parseKernel(source, why);
  if (!p) return notApplied(why);
  std::optional<DotOperands> ops = findDotOperands(*p, why);
  if (!ops) return notApplied(why);
  const std::string dt = dtypeOf(*ops->decl[0]);
  if (dt != "bf16" && dt != "f16")
    return notApplied("tensor cores (mma.sync m16n8k16) take bf16 or f16 operands, but '" + ops->name[0] + "' is " + dt);
  const ast::Argument* accArg = positionalArg(*ops->dot, 2);
  const ast::NameExpr* accName = accArg ? asName(accArg->value.get()) : nullptr;
  const ast::CallExpr* zeros = nullptr;
  for (const ast::StmtPtr& s : p->kernel->body) {
    if (!accName || s->kind != ast::StmtKind::Assign) continue;
    const auto& a = static_cast<const ast::AssignStmt&>(*s);
    const ast::NameExpr* t = a.targets.size() == 1 ? asName(a.targets[0].get()) : nullptr;
    if (t && t->name == accName->name) zeros = asCall(a.value.get(), "zeros");
  }
  if (!zeros) return notApplied("the dot's accumulator is not a `zeros(f32, shape)` made at the top of the kernel");
  if (keywordArg(*zeros, "layout")) return notApplied("the accumulator already has a layout (it is on tensor cores)");
  if (hasName(*p->kernel, "WM") || hasName(*p->kernel, "WN"))
    return notApplied("the kernel already uses the names WM or WN");
  // Shapes the mma layout takes (AG3049) and K in steps of 16.
  const std::map<std::string, int64_t> consts = constIntDefaults(*p->kernel);
  const ast::Argument* shapeArg = positionalArg(*zeros, 1);
  if (shapeArg && shapeArg->value->kind == ast::ExprKind::Tuple) {
    const auto& shape = static_cast<const ast::TupleExpr&>(*shapeArg->value);
    std::optional<int64_t> m = shape.elements.size() == 2 ? evalInt(*shape.elements[0], consts) : std::nullopt;
    std::optional<int64_t> n = shape.elements.size() == 2 ? evalInt(*shape.elements[1], consts) : std::nullopt;
    if (m && n && (*m % (16 * wm) != 0 || *n % (8 * wn) != 0))
      return notApplied("an accumulator of " + std::to_string(*m) + " x " + std::to_string(*n) + " cannot be split over " +
                        std::to_string(wm) + " x " + std::to_string(wn) + " warps of 16 x 8 atoms: rows must be a multiple of " +
                        std::to_string(16 * wm) + " and columns of " + std::to_string(8 * wn));
  }
  if (std::optional<std::vector<int64_t>> a = sharedShape(*ops->decl[0], consts); a && a->back() % 16 != 0)
    return notApplied("tensor cores step through K by 16, but '" + ops->name[0] + "' has rows of " +
                      std::to_string(a->back()));

  std::vector<Edit> edits;
  edits.push_back(setKeywordArg(*p, *zeros, "layout", "mma(warps=(WM, WN))"));
  const ast::Decorator* deco = kernelDecorator(*p->kernel);
  const ast::Argument* warpsArg = nullptr;
  if (deco->args)
    for (const ast::Argument& a : *deco->args)
      if (a.keyword && *a.keyword == "warps" && a.value) warpsArg = &a;
  if (warpsArg) {
    edits.push_back({warpsArg->value->range.begin, warpsArg->value->range.end, "WM * WN"});
  } else if (deco->args && !deco->args->empty()) {
    uint32_t at = deco->args->back().range.end;
    edits.push_back({at, at, ", warps=WM * WN"});
  } else {
    return notApplied("the @kernel decorator has no arguments to add warps= to");
  }
  edits.push_back(addConstParams(*p, {{"WM", wm}, {"WN", wn}}));
  return finishRewrite(source, std::move(edits),
                       "accumulator in the mma layout on " + std::to_string(wm) + " x " + std::to_string(wn) +
                           " warps: dot on tensor cores (ldmatrix + mma.sync)");
}

// The swizzle that keeps ldmatrix's eight 16-byte row reads conflict-free: the
// XOR moves 16-byte chunks (M) by a row index taken from the bits above one
// 128-byte line of banks (M + S), over as many chunk bits (B) as a row has.
// gemm_tc.ag: A of (128, 32) bf16 -> (2, 3, 3); B of (32, 128) bf16 -> (3, 3, 4).
std::optional<std::array<int, 3>> autoSwizzle(const std::vector<int64_t>& shape, const std::string& dtype) {
  const int64_t bytes = elementBytes(dtype);
  const int64_t row = shape.back();
  if (bytes > 16 || !std::has_single_bit(static_cast<uint64_t>(row))) return std::nullopt;
  const int m = log2Exact(16 / bytes);
  const int64_t lineElems = 128 / bytes;
  const int64_t chunksPerRow = row >> m;
  if (chunksPerRow < 2) return std::nullopt;  // one chunk per row: nothing to move
  int b, s;
  if (row >= lineElems) {
    b = log2Exact(lineElems >> m);
    s = log2Exact(row) - m;
  } else {
    b = log2Exact(chunksPerRow);
    s = log2Exact(lineElems) - m;
  }
  int64_t elements = 1;
  for (int64_t e : shape) elements *= e;
  if (elements % (int64_t{1} << (m + b)) != 0) return std::nullopt;
  return std::array<int, 3>{b, m, s};
}

RewriteResult swizzleShared(const std::string& source, const nlohmann::json& args) {
  std::string why;
  std::optional<ParsedKernel> p = parseKernel(source, why);
  if (!p) return notApplied(why);
  std::optional<DotOperands> ops = findDotOperands(*p, why);
  if (!ops) return notApplied(why);
  const std::map<std::string, int64_t> consts = constIntDefaults(*p->kernel);
  const bool automatic = args.is_null() || (args.is_string() && args.get<std::string>() == "auto") ||
                         (args.is_object() && args.empty());
  std::vector<Edit> edits;
  std::string description;
  for (size_t k = 0; k < 2; ++k) {
    if (k == 1 && ops->decl[1] == ops->decl[0]) break;
    const char* key = k ? "B" : "A";
    std::array<int, 3> chosen{};
    if (automatic) {
      std::optional<std::vector<int64_t>> shape = sharedShape(*ops->decl[k], consts);
      if (!shape) return notApplied("the shape of '" + ops->name[k] + "' is not a tuple of constants");
      std::optional<std::array<int, 3>> sw = autoSwizzle(*shape, dtypeOf(*ops->decl[k]));
      if (!sw) continue;
      chosen = *sw;
    } else {
      if (!args.is_object()) return notApplied("swizzle_shared takes \"auto\" or {\"A\": [B, M, S], \"B\": [B, M, S]}");
      if (!args.contains(key)) continue;
      const nlohmann::json& v = args[key];
      if (!v.is_array() || v.size() != 3 || !v[0].is_number_integer() || !v[1].is_number_integer() ||
          !v[2].is_number_integer())
        return notApplied(std::string("swizzle_shared: \"") + key + "\" must be [B, M, S], not " + v.dump());
      chosen = {v[0].get<int>(), v[1].get<int>(), v[2].get<int>()};
      if (chosen[0] < 0 || chosen[1] < 0 || chosen[2] < chosen[0])
        return notApplied(std::string("swizzle_shared: \"") + key + "\" = " + v.dump() + " needs 0 <= B <= S and M >= 0");
    }
    std::string text = "(" + std::to_string(chosen[0]) + ", " + std::to_string(chosen[1]) + ", " + std::to_string(chosen[2]) + ")";
    if (const ast::Argument* old = keywordArg(*ops->decl[k], "swizzle"); old && sameSwizzle(*old->value, chosen, consts))
      continue;
    edits.push_back(setKeywordArg(*p, *ops->decl[k], "swizzle", text));
    description += (description.empty() ? "" : ", ") + ops->name[k] + " swizzle=" + text;
  }
  if (edits.empty())
    return notApplied(automatic ? "the dot's shared operands already have the swizzle that suits ldmatrix (or need none)"
                                : "no swizzle to change: give \"A\" and/or \"B\"");
  return finishRewrite(source, std::move(edits), description);
}

}  // namespace argus::agent::detail

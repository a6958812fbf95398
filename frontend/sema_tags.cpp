// Tags and tag assertions: `tag(t, name=value)` becomes TagSet ops, and
// `assert <condition>` an Assert op whose condition is compiled to the postfix
// code of ir::AssertCode. Only the checker reads them (docs/checker.md, "Tags").
#include <algorithm>

#include "frontend/sema_internal.h"

namespace argus::sema::detail {

namespace {

// The tag read an expression spells, if it is one: `x.origin[d]`,
// `x.origin.row` / `.col`, or a user tag `x.name`.
struct TagRead {
  const ast::Expr* base = nullptr;
  std::string name;  // "origin" or the user tag
  int64_t dim = -1;  // origin only
  bool bareOrigin = false;  // `x.origin` without a coordinate
  bool badIndex = false;    // `x.origin[i]` with i not an integer literal
};

std::optional<TagRead> tagReadOf(const ast::Expr& e) {
  if (e.kind == ast::ExprKind::Subscript) {
    const auto& s = static_cast<const ast::SubscriptExpr&>(e);
    if (!s.base || s.base->kind != ast::ExprKind::Attribute) return std::nullopt;
    const auto& origin = static_cast<const ast::AttributeExpr&>(*s.base);
    if (origin.name != "origin" || !origin.base) return std::nullopt;
    TagRead r{origin.base.get(), "origin"};
    if (s.indices.size() == 1 && s.indices[0] && s.indices[0]->kind == ast::ExprKind::Int)
      r.dim = static_cast<const ast::IntExpr&>(*s.indices[0]).value;
    else
      r.badIndex = true;
    return r;
  }
  if (e.kind != ast::ExprKind::Attribute) return std::nullopt;
  const auto& a = static_cast<const ast::AttributeExpr&>(e);
  if (!a.base) return std::nullopt;
  if ((a.name == "row" || a.name == "col") && a.base->kind == ast::ExprKind::Attribute) {
    const auto& origin = static_cast<const ast::AttributeExpr&>(*a.base);
    if (origin.name == "origin" && origin.base) return TagRead{origin.base.get(), "origin", a.name == "row" ? 0 : 1};
  }
  if (a.name == "origin") {
    TagRead r{a.base.get(), "origin"};
    r.bareOrigin = true;
    return r;
  }
  if (a.name == "dtype" || a.name == "shape" || a.name == "tile") return std::nullopt;
  return TagRead{a.base.get(), a.name};
}

bool carriesTags(const ir::Type& t) {
  return t.isTile() || t.kind == ir::TypeKind::Shared ||
         (t.kind == ir::TypeKind::View && t.space == ir::MemSpace::Shared);
}

}  // namespace

Val Analyzer::evalTagCall(const ast::CallExpr& call) {
  const ast::Argument* subject = nullptr;
  std::vector<const ast::Argument*> tags;
  for (const ast::Argument& a : call.args) {
    if (!a.value) return Val::error();
    if (a.keyword) {
      tags.push_back(&a);
    } else if (!subject && tags.empty()) {
      subject = &a;
    } else {
      eval(*a.value);
      report(DiagId::TagArgument, a.range, {"tag() takes one positional argument, the tile"});
      return Val::error();
    }
  }
  if (!subject || tags.empty()) {
    report(DiagId::TagArgument, call.parenRange.empty() ? call.range : call.parenRange,
           {subject ? "tag() needs at least one named tag" : "tag() needs the tile to tag"});
    return Val::error();
  }
  Val tile = eval(*subject->value);
  if (tile.isError()) return Val::error();
  const ir::Type* t = typeOf(tile);
  if (!t || !t->isTile()) {
    std::string hint = t && (t->kind == ir::TypeKind::Shared || t->kind == ir::TypeKind::View)
                           ? " (tag the tile before storing it: shared memory keeps the tags of what was stored)"
                           : "";
    report(DiagId::TagArgument, subject->value->range,
           {"the first argument of tag() is " + describe(tile) + ", not a register tile" + hint});
    return Val::error();
  }
  ir::ValueId current = tile.id;
  std::vector<std::string> seen;
  for (const ast::Argument* a : tags) {
    const std::string& name = *a->keyword;
    if (name == "origin") {
      report(DiagId::TagArgument, a->keywordRange, {"'origin' is the built-in tag, set by loads from global tensors"});
      return Val::error();
    }
    if (std::find(seen.begin(), seen.end(), name) != seen.end()) {
      report(DiagId::TagArgument, a->keywordRange, {"tag '" + name + "' is given twice"});
      return Val::error();
    }
    seen.push_back(name);
    Val v = eval(*a->value);
    if (v.isError()) return Val::error();
    bool isConst = v.kind == Val::Kind::Const && v.c.kind == Constant::Kind::Int && canAdapt(v.c, ir::DType::I32);
    const ir::Type* vt = typeOf(v);
    if (!isConst && !(vt && *vt == ir::Type::scalar(ir::DType::I32))) {
      report(DiagId::TagArgument, a->value->range, {"the value of tag '" + name + "' is " + describe(v) + ", not an i32 scalar"});
      return Val::error();
    }
    ir::ValueId value = materialize(v, ir::DType::I32, a->value->range);
    ir::Attrs attrs;
    ir::TagSetAttrs(attrs).tagName(name);
    current = b().make(ir::OpKind::TagSet, {current, value}, fn_->values[tile.id].type, call.range, attrs);
  }
  return Val::value(current);
}

void Analyzer::analyzeAssert(const ast::AssertStmt& s) {
  if (!s.cond) return;
  // Compiles the condition to postfix; subjects (the values whose tags are
  // read) come first among the operands, in order of appearance.
  struct Compiler {
    explicit Compiler(Analyzer& analyzer) : an(analyzer) {}
    Analyzer& an;
    std::vector<ir::ValueId> subjects, scalars;
    std::vector<std::string> subjectTexts;
    std::vector<SourceRange> subjectRanges;
    std::vector<std::string> names{""};
    // Postfix with operand slots to fix up: scalar operand k becomes subjects.size() + k.
    std::vector<int64_t> code;
    std::vector<size_t> scalarSlots;
    bool failed = false;

    enum class Kind { Int, Truth, Error };

    Kind fail() {
      failed = true;
      return Kind::Error;
    }

    int64_t nameIndex(const std::string& name) {
      for (size_t i = 1; i < names.size(); ++i)
        if (names[i] == name) return static_cast<int64_t>(i);
      names.push_back(name);
      return static_cast<int64_t>(names.size() - 1);
    }

    Kind tagRead(const TagRead& r, const ast::Expr& whole) {
      if (r.bareOrigin) {
        an.report(DiagId::AssertUnsupported, whole.range,
                  {quote(an.text(whole.range)), "read one coordinate of it: " + an.text(r.base->range) + ".origin[0], .origin.row or .origin.col"});
        return fail();
      }
      if (r.name == "origin" && (r.badIndex || r.dim < 0)) {
        an.report(DiagId::AssertUnsupported, whole.range,
                  {quote(an.text(whole.range)), "index origin with an integer literal, as in .origin[0]"});
        return fail();
      }
      Val base = an.eval(*r.base);
      if (base.isError()) return fail();
      const ir::Type* t = an.typeOf(base);
      if (!t || !carriesTags(*t)) {
        std::string hint = t && t->kind == ir::TypeKind::View ? ": load(...) it, or copy it into shared memory" : "";
        if (t && t->kind == ir::TypeKind::Tensor) hint = ": assert on the tiles loaded from it";
        an.report(DiagId::TagNotCarried, r.base->range, {an.text(r.base->range), an.describe(base), hint});
        return fail();
      }
      std::string text = an.text(r.base->range);
      // A shared buffer is read through the view of all of it, as copy() and dot() read it:
      // policies that stage the buffer (pipelined) then point the assertion at the stage in use.
      if (t->kind == ir::TypeKind::Shared) {
        for (size_t i = 0; i < subjects.size(); ++i)
          if (subjectTexts[i] == text) base = Val::value(subjects[i]);
        if (an.typeOf(base)->kind == ir::TypeKind::Shared) base = an.asView(base, r.base->range, "assert", "x");
        if (base.isError()) return fail();
      }
      size_t index = subjects.size();
      for (size_t i = 0; i < subjects.size(); ++i)
        if (subjects[i] == base.id || subjectTexts[i] == text) index = i;
      if (index == subjects.size()) {
        subjects.push_back(base.id);
        subjectTexts.push_back(text);
        subjectRanges.push_back(r.base->range);
      }
      code.insert(code.end(), {static_cast<int64_t>(ir::AssertCode::Tag), static_cast<int64_t>(index),
                               nameIndex(r.name), r.name == "origin" ? r.dim : -1});
      return Kind::Int;
    }

    Kind leaf(const ast::Expr& e) {
      Val v = an.eval(e);
      if (v.isError()) return fail();
      if (v.kind == Val::Kind::Const && v.c.kind == Constant::Kind::Int && an.canAdapt(v.c, ir::DType::I32)) {
        code.insert(code.end(), {static_cast<int64_t>(ir::AssertCode::Const), v.c.i});
        return Kind::Int;
      }
      const ir::Type* t = an.typeOf(v);
      if (t && *t == ir::Type::scalar(ir::DType::I32)) {
        scalarSlots.push_back(code.size() + 1);
        code.insert(code.end(), {static_cast<int64_t>(ir::AssertCode::Scalar), static_cast<int64_t>(scalars.size())});
        scalars.push_back(v.id);
        return Kind::Int;
      }
      an.report(DiagId::AssertUnsupported, e.range,
                {quote(an.text(e.range)) + " (" + an.describe(v) + ")",
                 "an assertion compares i32 values: tags, loop variables, program_id(), constants and runtime sizes"});
      return fail();
    }

    bool expect(Kind got, Kind want, const ast::Expr& e, const char* context) {
      if (got == Kind::Error) return false;
      if (got == want) return true;
      an.report(DiagId::AssertUnsupported, e.range,
                {quote(an.text(e.range)), std::string("the operands of ") + context +
                                              (want == Kind::Truth ? " must be comparisons" : " must be integers, not comparisons")});
      failed = true;
      return false;
    }

    Kind compile(const ast::Expr& e) {
      using Op = ast::BinaryOp;
      if (e.kind == ast::ExprKind::Binary) {
        const auto& bin = static_cast<const ast::BinaryExpr&>(e);
        if (!bin.lhs || !bin.rhs) return fail();
        std::string spelling = ast::binaryOpSpelling(bin.op);
        bool logical = bin.op == Op::And || bin.op == Op::Or;
        bool comparison = bin.op == Op::Eq || bin.op == Op::Ne || bin.op == Op::Lt || bin.op == Op::Le ||
                          bin.op == Op::Gt || bin.op == Op::Ge;
        bool arithmetic = bin.op == Op::Add || bin.op == Op::Sub || bin.op == Op::Mul || bin.op == Op::FloorDiv ||
                          bin.op == Op::Mod;
        if (!logical && !comparison && !arithmetic) {
          std::string hint = bin.op == Op::Div ? "use // for integer division" : "use + - * // % and comparisons";
          an.report(DiagId::AssertUnsupported, bin.opRange, {"'" + spelling + "'", hint});
          return fail();
        }
        Kind want = logical ? Kind::Truth : Kind::Int;
        Kind l = compile(*bin.lhs);
        if (!expect(l, want, *bin.lhs, ("'" + spelling + "'").c_str())) return fail();
        Kind r = compile(*bin.rhs);
        if (!expect(r, want, *bin.rhs, ("'" + spelling + "'").c_str())) return fail();
        if (logical) {
          code.push_back(static_cast<int64_t>(bin.op == Op::And ? ir::AssertCode::And : ir::AssertCode::Or));
          return Kind::Truth;
        }
        if (comparison) {
          ir::CmpKind k = bin.op == Op::Eq ? ir::CmpKind::Eq : bin.op == Op::Ne ? ir::CmpKind::Ne
                        : bin.op == Op::Lt ? ir::CmpKind::Lt : bin.op == Op::Le ? ir::CmpKind::Le
                        : bin.op == Op::Gt ? ir::CmpKind::Gt : ir::CmpKind::Ge;
          code.insert(code.end(), {static_cast<int64_t>(ir::AssertCode::Compare), static_cast<int64_t>(k)});
          return Kind::Truth;
        }
        ir::BinaryKind k = bin.op == Op::Add ? ir::BinaryKind::Add : bin.op == Op::Sub ? ir::BinaryKind::Sub
                         : bin.op == Op::Mul ? ir::BinaryKind::Mul : bin.op == Op::FloorDiv ? ir::BinaryKind::Div
                         : ir::BinaryKind::Rem;
        code.insert(code.end(), {static_cast<int64_t>(ir::AssertCode::Binary), static_cast<int64_t>(k)});
        return Kind::Int;
      }
      if (e.kind == ast::ExprKind::Unary) {
        const auto& u = static_cast<const ast::UnaryExpr&>(e);
        if (!u.operand) return fail();
        Kind k = compile(*u.operand);
        if (u.op == ast::UnaryOp::Not) {
          if (!expect(k, Kind::Truth, *u.operand, "'not'")) return fail();
          code.push_back(static_cast<int64_t>(ir::AssertCode::Not));
          return Kind::Truth;
        }
        if (u.op == ast::UnaryOp::Invert) {
          an.report(DiagId::AssertUnsupported, e.range, {"'~'", "use + - * // % and comparisons"});
          return fail();
        }
        if (!expect(k, Kind::Int, *u.operand, u.op == ast::UnaryOp::Neg ? "'-'" : "'+'")) return fail();
        if (u.op == ast::UnaryOp::Neg) code.push_back(static_cast<int64_t>(ir::AssertCode::Neg));
        return Kind::Int;
      }
      if (std::optional<TagRead> r = tagReadOf(e)) return tagRead(*r, e);
      return leaf(e);
    }
  };

  Compiler c(*this);
  Compiler::Kind kind = c.compile(*s.cond);
  if (c.failed) return;
  if (kind != Compiler::Kind::Truth) {
    report(DiagId::AssertNotCondition, s.cond->range, {"the integer " + quote(text(s.cond->range))});
    return;
  }
  if (c.subjects.size() > 2) {
    std::string list;
    for (size_t i = 0; i < c.subjectTexts.size(); ++i) list += (i ? ", " : "") + quote(c.subjectTexts[i]);
    report(DiagId::AssertTooManySubjects, s.cond->range, {std::to_string(c.subjects.size()), list});
    return;
  }
  if (c.subjects.size() == 2) {
    const std::vector<int64_t>& x = fn_->values[c.subjects[0]].type.shape;
    const std::vector<int64_t>& y = fn_->values[c.subjects[1]].type.shape;
    bool dotPair = x.size() == 2 && y.size() == 2 && x[1] == y[0];
    if (x != y && !dotPair) {
      report(DiagId::AssertPairing, s.cond->range, {c.subjectTexts[0], shapeText(x), c.subjectTexts[1], shapeText(y)});
      return;
    }
  }
  std::vector<ir::ValueId> operands = c.subjects;
  operands.insert(operands.end(), c.scalars.begin(), c.scalars.end());
  for (size_t slot : c.scalarSlots) c.code[slot] += static_cast<int64_t>(c.subjects.size());
  ir::Attrs attrs;
  if (s.message) {
    Val m = eval(*s.message);
    if (m.kind == Val::Kind::String) c.names[0] = m.text;
  }
  ir::AssertAttrs(attrs).code(c.code).names(c.names);
  b().create(ir::OpKind::Assert, operands, {}, s.cond->range, attrs);
}

}  // namespace argus::sema::detail

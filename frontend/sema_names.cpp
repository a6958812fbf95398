// Names, scopes and symbols: lookup with "did you mean", bindings, and the
// symbol table the language server uses.
#include <algorithm>
#include <limits>

#include "frontend/sema_internal.h"

namespace argus::sema::detail {

// Optimal string alignment distance: insertions, deletions, substitutions and
// transpositions of neighbours each cost 1.
size_t editDistance(std::string_view a, std::string_view b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i)
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

std::string Analyzer::suggestion(std::string_view name, const std::vector<std::string>& candidates) const {
  // A suggestion must keep most of what was written: none for names of one or two
  // letters (`tl` is not a typo of `t`), one edit up to five letters (`rand` is not
  // `range`), a third of the letters beyond.
  size_t limit = name.size() <= 2 ? 0 : name.size() <= 5 ? 1 : (name.size() + 2) / 3;
  if (limit == 0) return "";
  size_t best = std::numeric_limits<size_t>::max();
  std::string bestName;
  for (const std::string& c : candidates) {
    if (c == name || c.empty()) continue;
    // Cheap reject before the quadratic distance.
    size_t lenDiff = c.size() > name.size() ? c.size() - name.size() : name.size() - c.size();
    if (lenDiff > limit) continue;
    size_t dist = editDistance(name, c);
    if (dist > limit) continue;
    if (dist < best || (dist == best && c < bestName)) {
      best = dist;
      bestName = c;
    }
  }
  return bestName;
}

std::vector<std::string> Analyzer::namesInScope(bool callee) const {
  std::vector<std::string> names;
  // Only what can stand where the name stands: functions before '(', values elsewhere
  // (`float(...)` is not a misspelled `floor`, `x` not a misspelled `exp`).
  if (callee) {
    for (const auto& [name, def] : devices_) names.push_back(name);
    for (const BuiltinInfo& b : builtinTable())
      if (b.id != Builtin::Tag) names.push_back(b.name);
    return names;
  }
  if (frame_)
    for (const auto& [name, binding] : frame_->env) names.push_back(name);
  names.push_back("inf");
  names.push_back("nan");
  for (int t = 0; t <= static_cast<int>(ir::DType::F8E5M2); ++t)
    names.push_back(ir::dtypeName(static_cast<ir::DType>(t)));
  return names;
}

void Analyzer::reportUnknownName(const std::string& name, SourceRange range, const std::vector<std::string>& extra,
                                 bool callee) {
  std::vector<std::string> candidates = namesInScope(callee);
  candidates.insert(candidates.end(), extra.begin(), extra.end());
  std::string hint = suggestion(name, candidates);
  Diagnostic* d = report(DiagId::UnknownName, range, {name, hint.empty() ? "" : "; did you mean '" + hint + "'?"});
  if (!hint.empty()) addFixIt(d, range, hint, "replace with '" + hint + "'");
}

Binding* Analyzer::findBinding(const std::string& name) {
  if (!frame_) return nullptr;
  auto it = frame_->env.find(name);
  return it == frame_->env.end() ? nullptr : &it->second;
}

Val Analyzer::lookup(const ast::NameExpr& e) {
  if (Binding* bnd = findBinding(e.name)) {
    if (bnd->state == Binding::State::OnlyInLoop) {
      report(DiagId::DefinedOnlyInLoop, e.range, {e.name, std::to_string(bnd->line)});
      return Val::error();
    }
    if (bnd->state == Binding::State::OnlyInBranch) {
      report(DiagId::DefinedInOneBranch, e.range, {e.name, std::to_string(bnd->line)});
      return Val::error();
    }
    if (bnd->state == Binding::State::Unmergeable) {
      report(DiagId::CannotCarry, e.range, {e.name, describe(bnd->val)});
      return Val::error();
    }
    addReference(bnd->symbol, e.range);
    if (bnd->val.isError()) ++poisonedReads_;  // an error was reported where it was assigned
    return bnd->val;
  }
  if (auto it = devices_.find(e.name); it != devices_.end()) {
    auto sym = symbolIndex_.find((static_cast<uint64_t>(it->second->nameRange.begin) << 8) |
                                 static_cast<uint64_t>(Symbol::Kind::DeviceFunction));
    if (sym != symbolIndex_.end()) addReference(sym->second, e.range);
    Val v;
    v.kind = Val::Kind::Device;
    v.def = it->second;
    v.text = e.name;
    return v;
  }
  if (auto it = kernels_.find(e.name); it != kernels_.end()) {
    auto sym = symbolIndex_.find((static_cast<uint64_t>(it->second->nameRange.begin) << 8) |
                                 static_cast<uint64_t>(Symbol::Kind::Kernel));
    if (sym != symbolIndex_.end()) addReference(sym->second, e.range);
    Val v;
    v.kind = Val::Kind::Kernel;
    v.text = e.name;
    return v;
  }
  if (const BuiltinInfo* info = findBuiltin(e.name)) {
    if (info->id == Builtin::Tag) {
      report(DiagId::ReservedForChecker, e.range, {e.name});
      return Val::error();
    }
    addReference(builtinSymbol(e.name, info->signature), e.range);
    Val v;
    v.kind = Val::Kind::Builtin;
    v.builtin = static_cast<int>(info->id);
    v.text = e.name;
    return v;
  }
  if (e.name == "inf") {
    addReference(builtinSymbol("inf", "inf: f32 constant (+infinity)"), e.range);
    return Val::constant(Constant::ofFloat(std::numeric_limits<double>::infinity()));
  }
  if (e.name == "nan") {
    addReference(builtinSymbol("nan", "nan: f32 constant (a quiet NaN)"), e.range);
    return Val::constant(Constant::ofFloat(std::numeric_limits<double>::quiet_NaN()));
  }
  if (std::optional<ir::DType> dt = ir::dtypeFromName(e.name)) {
    Val v;
    v.kind = Val::Kind::DType;
    v.dtype = *dt;
    return v;
  }
  if (e.name == "Tensor" || e.name == "const") {
    report(DiagId::NotAValue, e.range, {quote(e.name), "; it is only used in parameter types"});
    return Val::error();
  }
  reportUnknownName(e.name, e.range);
  return Val::error();
}

void Analyzer::bind(const std::string& name, Val val, SourceRange range, Symbol::Kind kind) {
  Binding nb;
  nb.kind = kind;
  nb.symbol = defineSymbol(kind, name, range, symbolDescription(val));
  nb.version = nextVersion_++;
  nb.val = std::move(val);
  frame_->env[name] = std::move(nb);
}

void Analyzer::bindLocal(const ast::NameExpr& target, Val val) {
  const std::string& name = target.name;
  Binding* old = findBinding(name);
  if (old && frame_->isKernel &&
      (old->kind == Symbol::Kind::Parameter || old->kind == Symbol::Kind::Const || old->kind == Symbol::Kind::Size)) {
    Diagnostic* d = report(DiagId::AssignToParameter, target.range, {name, symbolKindName(old->kind)});
    if (d && old->symbol >= 0)
      d->labels.push_back({result_.symbols[static_cast<size_t>(old->symbol)].definition, "declared here"});
    return;
  }
  if (val.kind == Val::Kind::Value && fn_->values[val.id].name.empty()) fn_->values[val.id].name = name;
  Binding nb;
  if (old) {
    nb.kind = old->kind;
    nb.symbol = old->symbol;
    addReference(nb.symbol, target.range);
  } else {
    nb.kind = Symbol::Kind::Local;
    nb.symbol = defineSymbol(Symbol::Kind::Local, name, target.range, symbolDescription(val));
  }
  nb.version = nextVersion_++;
  nb.val = std::move(val);
  frame_->env[name] = std::move(nb);
}

int Analyzer::defineSymbol(Symbol::Kind kind, const std::string& name, SourceRange def, std::string description) {
  uint64_t key = (static_cast<uint64_t>(def.begin) << 8) | static_cast<uint64_t>(kind);
  if (auto it = symbolIndex_.find(key); it != symbolIndex_.end()) return it->second;
  int index = static_cast<int>(result_.symbols.size());
  result_.symbols.push_back(Symbol{kind, name, def, {}, std::move(description)});
  symbolIndex_[key] = index;
  return index;
}

void Analyzer::addReference(int symbol, SourceRange range) {
  if (symbol < 0) return;
  // Kernel bodies are analysed once; only inlined device functions (analysed
  // once per call) can mention the same name at the same place again.
  if (!callStack_.empty()) {
    uint64_t key = (static_cast<uint64_t>(symbol) << 32) | range.begin;
    if (!references_.insert(key).second) return;
  }
  result_.symbols[static_cast<size_t>(symbol)].references.push_back(range);
}

int Analyzer::builtinSymbol(const std::string& name, const std::string& description) {
  if (auto it = builtinSymbols_.find(name); it != builtinSymbols_.end()) return it->second;
  int index = static_cast<int>(result_.symbols.size());
  result_.symbols.push_back(Symbol{Symbol::Kind::Builtin, name, {}, {}, description});
  builtinSymbols_[name] = index;
  return index;
}

void Analyzer::collectTargets(const ast::Expr& target, std::vector<std::string>& out) {
  if (target.kind == ast::ExprKind::Name) {
    out.push_back(static_cast<const ast::NameExpr&>(target).name);
  } else if (target.kind == ast::ExprKind::Tuple) {
    for (const ast::ExprPtr& e : static_cast<const ast::TupleExpr&>(target).elements)
      if (e) collectTargets(*e, out);
  } else if (target.kind == ast::ExprKind::List) {
    for (const ast::ExprPtr& e : static_cast<const ast::ListExpr&>(target).elements)
      if (e) collectTargets(*e, out);
  }
}

void Analyzer::collectAssigned(const ast::Block& block, std::vector<std::string>& out) {
  for (const ast::StmtPtr& s : block) {
    if (!s) continue;
    switch (s->kind) {
      case ast::StmtKind::Assign:
        for (const ast::ExprPtr& t : static_cast<const ast::AssignStmt&>(*s).targets)
          if (t) collectTargets(*t, out);
        break;
      case ast::StmtKind::AugAssign:
        if (const auto& t = static_cast<const ast::AugAssignStmt&>(*s).target) collectTargets(*t, out);
        break;
      case ast::StmtKind::For: {
        const auto& f = static_cast<const ast::ForStmt&>(*s);
        if (f.target) collectTargets(*f.target, out);
        collectAssigned(f.body, out);
        break;
      }
      case ast::StmtKind::While:
        collectAssigned(static_cast<const ast::WhileStmt&>(*s).body, out);
        break;
      case ast::StmtKind::If: {
        const auto& i = static_cast<const ast::IfStmt&>(*s);
        collectAssigned(i.then, out);
        collectAssigned(i.orelse, out);
        break;
      }
      default:
        break;
    }
  }
}

}  // namespace argus::sema::detail

#include "lsp/analysis.h"

#include <algorithm>
#include <exception>

namespace argus::lsp {

namespace {

// Collects every expression of the tree. Statements nest only as deep as the
// indentation; expressions (a chain of ten thousand `*`) are walked with an
// explicit stack, so no recursion grows with the input.
class ExpressionCollector {
 public:
  explicit ExpressionCollector(std::vector<const ast::Expr*>& out) : out_(out) {}

  void module(const ast::Module& module) {
    for (const auto& fn : module.functions)
      if (fn) function(*fn);
    block(module.strayStatements);
  }

 private:
  void function(const ast::FunctionDef& fn) {
    for (const ast::Decorator& d : fn.decorators)
      if (d.args) arguments(*d.args);
    for (const ast::Param& p : fn.params) {
      expr(p.annotation.get());
      expr(p.defaultValue.get());
    }
    expr(fn.returnAnnotation.get());
    block(fn.body);
  }

  void arguments(const std::vector<ast::Argument>& args) {
    for (const ast::Argument& a : args) expr(a.value.get());
  }

  // Statements are walked with a stack of blocks too (nesting is bounded by
  // the parser's indentation limit, but a stack costs nothing).
  void block(const ast::Block& top) {
    std::vector<const ast::Stmt*> pending;
    auto pushBlock = [&](const ast::Block& stmts) {
      for (auto it = stmts.rbegin(); it != stmts.rend(); ++it)
        if (*it) pending.push_back(it->get());
    };
    pushBlock(top);
    while (!pending.empty()) {
      const ast::Stmt& s = *pending.back();
      pending.pop_back();
      switch (s.kind) {
        case ast::StmtKind::Expr: expr(static_cast<const ast::ExprStmt&>(s).expr.get()); break;
        case ast::StmtKind::Assign: {
          const auto& a = static_cast<const ast::AssignStmt&>(s);
          for (const auto& t : a.targets) expr(t.get());
          expr(a.annotation.get());
          expr(a.value.get());
          break;
        }
        case ast::StmtKind::AugAssign: {
          const auto& a = static_cast<const ast::AugAssignStmt&>(s);
          expr(a.target.get());
          expr(a.value.get());
          break;
        }
        case ast::StmtKind::For: {
          const auto& f = static_cast<const ast::ForStmt&>(s);
          expr(f.target.get());
          expr(f.iter.get());
          pushBlock(f.body);
          break;
        }
        case ast::StmtKind::While: {
          const auto& w = static_cast<const ast::WhileStmt&>(s);
          expr(w.cond.get());
          pushBlock(w.body);
          break;
        }
        case ast::StmtKind::If: {
          const auto& i = static_cast<const ast::IfStmt&>(s);
          expr(i.cond.get());
          pushBlock(i.orelse);
          pushBlock(i.then);
          break;
        }
        case ast::StmtKind::Return: expr(static_cast<const ast::ReturnStmt&>(s).value.get()); break;
        case ast::StmtKind::Assert: {
          const auto& a = static_cast<const ast::AssertStmt&>(s);
          expr(a.cond.get());
          expr(a.message.get());
          break;
        }
        case ast::StmtKind::Pass:
        case ast::StmtKind::Break:
        case ast::StmtKind::Continue:
        case ast::StmtKind::Error: break;
      }
    }
  }

  void expr(const ast::Expr* root) {
    std::vector<const ast::Expr*> pending;
    if (root) pending.push_back(root);
    auto push = [&](const ast::Expr* e) {
      if (e) pending.push_back(e);
    };
    while (!pending.empty()) {
      const ast::Expr* e = pending.back();
      pending.pop_back();
      out_.push_back(e);  // the order does not matter: the list is sorted afterwards
      switch (e->kind) {
        case ast::ExprKind::Tuple:
          for (const auto& x : static_cast<const ast::TupleExpr*>(e)->elements) push(x.get());
          break;
        case ast::ExprKind::List:
          for (const auto& x : static_cast<const ast::ListExpr*>(e)->elements) push(x.get());
          break;
        case ast::ExprKind::Call: {
          const auto* c = static_cast<const ast::CallExpr*>(e);
          push(c->callee.get());
          for (const ast::Argument& a : c->args) push(a.value.get());
          break;
        }
        case ast::ExprKind::Attribute: push(static_cast<const ast::AttributeExpr*>(e)->base.get()); break;
        case ast::ExprKind::Subscript: {
          const auto* s = static_cast<const ast::SubscriptExpr*>(e);
          push(s->base.get());
          for (const auto& x : s->indices) push(x.get());
          break;
        }
        case ast::ExprKind::Slice: {
          const auto* s = static_cast<const ast::SliceExpr*>(e);
          push(s->lower.get());
          push(s->upper.get());
          push(s->step.get());
          break;
        }
        case ast::ExprKind::Binary: {
          const auto* b = static_cast<const ast::BinaryExpr*>(e);
          push(b->lhs.get());
          push(b->rhs.get());
          break;
        }
        case ast::ExprKind::Unary: push(static_cast<const ast::UnaryExpr*>(e)->operand.get()); break;
        default: break;
      }
    }
  }

  std::vector<const ast::Expr*>& out_;
};

bool contains(SourceRange range, uint32_t offset) { return range.begin <= offset && offset <= range.end; }

}  // namespace

CompileOptions effectiveOptions(const ConfiguredOptions& configured, const std::string& text) {
  CompileOptions options;
  options.defines = configured.defines;
  if (configured.arch && isSupportedArch(*configured.arch)) {
    options.arch = *configured.arch;
  } else if (std::string declared = declaredArch(text); isSupportedArch(declared)) {
    options.arch = declared;
  }
  return options;
}

std::string optionsKey(const CompileOptions& options) {
  std::string key = options.arch;
  for (const auto& [name, value] : options.defines) key += "\x1f" + name + "=" + value;
  if (options.warningsAsErrors) key += "\x1f-Werror";
  return key;
}

std::vector<Diagnostic> Snapshot::currentDiagnostics() const {
  std::lock_guard<std::mutex> lock(checkedMutex_);
  return checked_ ? *checked_ : diagnostics;
}

bool Snapshot::checked() const {
  std::lock_guard<std::mutex> lock(checkedMutex_);
  return checked_.has_value();
}

void Snapshot::setCheckedDiagnostics(std::vector<Diagnostic> all) const {
  std::lock_guard<std::mutex> lock(checkedMutex_);
  checked_ = std::move(all);
}

std::shared_ptr<const std::vector<codegen::KernelResources>> Snapshot::resources() const {
  std::lock_guard<std::mutex> lock(checkedMutex_);
  return resources_;
}

void Snapshot::setResources(std::shared_ptr<const std::vector<codegen::KernelResources>> resources) const {
  std::lock_guard<std::mutex> lock(checkedMutex_);
  resources_ = std::move(resources);
}

std::shared_ptr<const Snapshot> analyzeDocument(const std::string& uri, int64_t version,
                                                uint64_t generation, std::string text,
                                                const ConfiguredOptions& configured) {
  auto snapshot = std::make_shared<Snapshot>();
  snapshot->uri = uri;
  snapshot->version = version;
  snapshot->generation = generation;
  CompileOptions options = effectiveOptions(configured, text);
  snapshot->compilation = std::make_unique<Compilation>(SourceFile(uri, std::move(text)), std::move(options));
  Compilation& c = *snapshot->compilation;
  snapshot->tokens = c.tokens();
  snapshot->ast = &c.ast();
  snapshot->sema = &c.sema();
  snapshot->ir = &c.ir();
  snapshot->diagnostics = c.diagnostics();
  ExpressionCollector(snapshot->expressions).module(*snapshot->ast);
  std::stable_sort(snapshot->expressions.begin(), snapshot->expressions.end(),
                   [](const ast::Expr* a, const ast::Expr* b) {
                     // Outer before inner on the same start (expressionAt relies on it).
                     if (a->range.begin != b->range.begin) return a->range.begin < b->range.begin;
                     return a->range.end > b->range.end;
                   });
  return snapshot;
}

const ast::Expr* expressionAt(const Snapshot& snapshot, uint32_t offset,
                              bool (*accept)(const Snapshot&, const ast::Expr&)) {
  const ast::Expr* best = nullptr;
  for (const ast::Expr* e : snapshot.expressions) {
    if (e->range.begin > offset) break;
    if (!contains(e->range, offset)) continue;
    if (accept && !accept(snapshot, *e)) continue;
    // Prefer the narrowest range; on a tie the later (inner) one.
    if (!best || e->range.end - e->range.begin <= best->range.end - best->range.begin) best = e;
  }
  return best;
}

const sema::Symbol* symbolAt(const Snapshot& snapshot, uint32_t offset, SourceRange* range) {
  if (!snapshot.sema) return nullptr;
  const sema::Symbol* best = nullptr;
  SourceRange bestRange;
  auto consider = [&](const sema::Symbol& symbol, SourceRange r) {
    if (r.empty() || !contains(r, offset)) return;
    if (!best || r.end - r.begin < bestRange.end - bestRange.begin) {
      best = &symbol;
      bestRange = r;
    }
  };
  for (const sema::Symbol& symbol : snapshot.sema->symbols) {
    consider(symbol, symbol.definition);
    for (SourceRange r : symbol.references) consider(symbol, r);
  }
  if (best && range) *range = bestRange;
  return best;
}

const ir::Type* symbolType(const Snapshot& snapshot, const sema::Symbol& symbol) {
  if (!snapshot.sema || symbol.kind == sema::Symbol::Kind::Builtin) return nullptr;
  auto typeOfNameAt = [&](SourceRange range) -> const ir::Type* {
    auto it = std::lower_bound(snapshot.expressions.begin(), snapshot.expressions.end(), range.begin,
                               [](const ast::Expr* e, uint32_t offset) { return e->range.begin < offset; });
    for (; it != snapshot.expressions.end() && (*it)->range.begin == range.begin; ++it) {
      if ((*it)->range != range || (*it)->kind != ast::ExprKind::Name) continue;
      auto type = snapshot.sema->exprTypes.find((*it)->id);
      if (type != snapshot.sema->exprTypes.end()) return &type->second;
    }
    return nullptr;
  };
  if (!symbol.definition.empty())
    if (const ir::Type* type = typeOfNameAt(symbol.definition)) return type;
  for (SourceRange r : symbol.references)
    if (const ir::Type* type = typeOfNameAt(r)) return type;
  return nullptr;
}

const ast::FunctionDef* functionAt(const Snapshot& snapshot, uint32_t offset) {
  if (!snapshot.ast) return nullptr;
  for (const auto& fn : snapshot.ast->functions)
    if (fn && contains(fn->range, offset)) return fn.get();
  return nullptr;
}

const ir::Function* kernelAt(const Snapshot& snapshot, uint32_t offset) {
  const ast::FunctionDef* def = functionAt(snapshot, offset);
  if (!def || !snapshot.sema || !snapshot.sema->module) return nullptr;
  for (const auto& fn : snapshot.sema->module->functions)
    if (fn && fn->name == def->name) return fn.get();
  return nullptr;
}

}  // namespace argus::lsp

// Inlay hints about memory, at the end of the statement that defines a local:
// a register tile's layout, a shared buffer's bytes (times its pipeline
// stages), and on the leading copies of a `pipelined` loop which iteration and
// stage they fill. Stage counts come from sema's IR (the loop's `stages=`), so
// they are shown only for kernels that checked. After a kernel's header: the
// registers (and spills) ptxas gave it, measured after the last check.
#include <map>

#include "lsp/features_extra.h"
#include "lsp/syntax_walk.h"

namespace argus::lsp {

namespace {

// The shape sema's IR gives each shared buffer, by the offset of its `shared(...)`
// call. The pipelining pass adds a leading dimension, one per stage, to the
// buffers a pipelined loop's copies fill; the AST's types are from before it.
std::map<uint32_t, std::vector<int64_t>> irSharedShapes(const Snapshot& snapshot) {
  std::map<uint32_t, std::vector<int64_t>> shapes;
  if (!snapshot.sema || !snapshot.sema->module) return shapes;
  for (const auto& fn : snapshot.sema->module->functions) {
    if (!fn) continue;
    std::vector<const ir::Block*> work{&fn->body};
    while (!work.empty()) {
      const ir::Block* block = work.back();
      work.pop_back();
      for (const auto& op : block->ops) {
        if (!op) continue;
        if (op->kind == ir::OpKind::AllocShared && !op->results.empty() && op->results[0] < fn->values.size())
          shapes.emplace(op->range.begin, fn->values[op->results[0]].type.shape);
        for (const ir::Block& region : op->regions) work.push_back(&region);
      }
    }
  }
  return shapes;
}

std::string bytesText(int64_t bytes) {
  if (bytes >= 1024 && bytes % 1024 == 0) return std::to_string(bytes / 1024) + " KiB";
  if (bytes >= 1024) return std::to_string(bytes / 1024) + "." + std::to_string(bytes % 1024 * 10 / 1024) + " KiB";
  return std::to_string(bytes) + " B";
}

std::optional<int64_t> sharedBytes(const ir::Type& type) {
  int64_t elements = 1;
  for (int64_t extent : type.shape) {
    if (extent <= 0 || elements > (int64_t{1} << 40) / extent) return std::nullopt;
    elements *= extent;
  }
  return elements * std::max(1, ir::dtypeBits(type.dtype) / 8);
}

const ast::CallExpr* callOf(const ast::Stmt& s, std::string_view* name) {
  if (s.kind != ast::StmtKind::Expr) return nullptr;
  const ast::Expr* e = static_cast<const ast::ExprStmt&>(s).expr.get();
  if (!e || e->kind != ast::ExprKind::Call) return nullptr;
  const auto* call = static_cast<const ast::CallExpr*>(e);
  if (!call->callee || call->callee->kind != ast::ExprKind::Name) return nullptr;
  *name = static_cast<const ast::NameExpr&>(*call->callee).name;
  return call;
}

// The buffer a copy writes: `a_s` in `copy_async(a_s, ...)` or `copy_async(a_s[s], ...)`.
const ast::NameExpr* destinationBuffer(const ast::CallExpr& call) {
  if (call.args.empty() || !call.args[0].value) return nullptr;
  const ast::Expr* dst = call.args[0].value.get();
  if (dst->kind == ast::ExprKind::Subscript) dst = static_cast<const ast::SubscriptExpr&>(*dst).base.get();
  return dst && dst->kind == ast::ExprKind::Name ? static_cast<const ast::NameExpr*>(dst) : nullptr;
}

json hintAt(const SourceFile& file, uint32_t offset, std::string label, std::string tooltip) {
  json hint = {{"position", toJson(positionOf(file, offset))}, {"label", std::move(label)}, {"paddingLeft", true}};
  if (!tooltip.empty()) hint["tooltip"] = std::move(tooltip);
  return hint;
}

// The offset just after the `:` that ends a function's header.
std::optional<uint32_t> headerEnd(const Snapshot& snapshot, const ast::FunctionDef& def) {
  int depth = 0;
  for (size_t i = 0; i + 1 < snapshot.tokens.size(); ++i) {
    const TokenInfo& token = snapshot.tokens[i];
    if (token.range.begin < def.nameRange.end) continue;
    if (token.range.begin >= def.range.end) break;
    if (token.kind == "'('" || token.kind == "'['") ++depth;
    if (token.kind == "')'" || token.kind == "']'") --depth;
    if (depth == 0 && token.kind == "':'" && snapshot.tokens[i + 1].kind == "NEWLINE") return token.range.end;
  }
  return std::nullopt;
}

// Blocks of `threads` threads that an SM's 64K registers hold at `registers`
// per thread (allocated per warp in units of 256).
int64_t blocksByRegisters(int registers, int64_t threads) {
  if (registers <= 0 || threads <= 0) return 0;
  int64_t perWarp = (int64_t{registers} * 32 + 255) / 256 * 256;
  int64_t warps = 65536 / perWarp, warpsPerBlock = (threads + 31) / 32;
  return warps / warpsPerBlock;
}

std::string kernelResourcesTooltip(const codegen::KernelResources& r, const std::string& arch, int64_t threads) {
  std::string text = "ptxas (" + arch + ") allocates " + std::to_string(r.registers) + " registers per thread";
  if (threads > 0)
    text += "; at " + std::to_string(threads) + " threads per block, the register file holds " +
            std::to_string(blocksByRegisters(r.registers, threads)) + " block(s) per SM";
  text += ".";
  if (r.spillStoreBytes > 0 || r.spillLoadBytes > 0)
    text += " Spills: " + std::to_string(r.spillStoreBytes) + " bytes stored, " + std::to_string(r.spillLoadBytes) +
            " bytes loaded per thread (local memory, slow): fewer live tiles or smaller ones avoid them.";
  if (r.stackBytes > 0) text += " Stack frame: " + std::to_string(r.stackBytes) + " bytes.";
  text += " Measured on the PTX of the last check.";
  return text;
}

// What ptxas allocated for each kernel, after its header.
void resourceInlayHints(const Snapshot& snapshot, uint32_t begin, uint32_t end, json& hints) {
  std::shared_ptr<const std::vector<codegen::KernelResources>> resources = snapshot.resources();
  if (!resources || !snapshot.ast) return;
  for (const auto& def : snapshot.ast->functions) {
    if (!def || def->range.end < begin || def->range.begin > end) continue;
    const codegen::KernelResources* found = nullptr;
    for (const codegen::KernelResources& r : *resources)
      if (r.kernel == def->name) found = &r;
    std::optional<uint32_t> at = found ? headerEnd(snapshot, *def) : std::nullopt;
    if (!at) continue;
    int64_t threads = 0;
    if (snapshot.ir)
      for (const auto& fn : snapshot.ir->functions)
        if (fn && fn->name == def->name) threads = fn->launchThreads();
    std::string label = std::to_string(found->registers) + " registers";
    if (found->spillStoreBytes > 0) label += ", " + std::to_string(found->spillStoreBytes) + " B spilled";
    hints.push_back(hintAt(snapshot.file(), *at, label,
                           kernelResourcesTooltip(*found, snapshot.options().arch, threads)));
  }
}

}  // namespace

json memoryInlayHints(const Snapshot& snapshot, Range range) {
  json hints = json::array();
  if (!snapshot.ast || !snapshot.sema) return hints;
  const SourceFile& file = snapshot.file();
  uint32_t begin = offsetOf(file, range.start), end = offsetOf(file, range.end);
  auto visible = [&](const ast::Stmt& s) { return s.range.end >= begin && s.range.begin <= end; };
  std::map<uint32_t, std::vector<int64_t>> irShapes = irSharedShapes(snapshot);
  std::vector<StatementVisit> statements = allStatements(*snapshot.ast);
  resourceInlayHints(snapshot, begin, end, hints);

  // The statement that defines each local (by the offset of its name).
  std::map<uint32_t, const ast::AssignStmt*> definingStatement;
  for (const StatementVisit& visit : statements)
    if (visit.stmt->kind == ast::StmtKind::Assign)
      for (const auto& target : static_cast<const ast::AssignStmt&>(*visit.stmt).targets)
        if (target && target->kind == ast::ExprKind::Name)
          definingStatement.emplace(target->range.begin, static_cast<const ast::AssignStmt*>(visit.stmt));

  // Tiles' layouts and shared buffers' bytes; the stages of staged buffers.
  std::map<std::pair<const ast::FunctionDef*, std::string>, int64_t> bufferStages;
  for (const sema::Symbol& symbol : snapshot.sema->symbols) {
    if (symbol.kind != sema::Symbol::Kind::Local || symbol.definition.empty()) continue;
    auto def = definingStatement.find(symbol.definition.begin);
    if (def == definingStatement.end()) continue;
    const ast::AssignStmt& stmt = *def->second;
    const ir::Type* type = symbolType(snapshot, symbol);
    if (!type) continue;
    if (type->isTile()) {
      if (visible(stmt))
        hints.push_back(hintAt(file, stmt.range.end, "layout " + ir::layoutStr(type->layout),
                               "How the tile's elements are spread over threads (hover the name for the full map)."));
      continue;
    }
    if (type->kind != ir::TypeKind::Shared) continue;
    std::optional<int64_t> bytes = sharedBytes(*type);
    if (!bytes) continue;
    int64_t stages = 1;
    if (stmt.value)
      if (auto ir = irShapes.find(stmt.value->range.begin);
          ir != irShapes.end() && ir->second.size() == type->shape.size() + 1 && ir->second[0] > 1)
        stages = ir->second[0];
    if (stages > 1) bufferStages[{functionAt(snapshot, stmt.range.begin), symbol.name}] = stages;
    if (!visible(stmt)) continue;
    std::string label = bytesText(*bytes);
    std::string tooltip = "Shared memory taken by this buffer.";
    if (stages > 1) {
      label += " × " + std::to_string(stages) + " stages = " + bytesText(*bytes * stages);
      tooltip = "A pipelined loop's leading copies fill this buffer: the compiler keeps " + std::to_string(stages) +
                " copies of it, one per stage.";
    }
    hints.push_back(hintAt(file, stmt.range.end, label, tooltip));
  }

  // The leading copies of a pipelined loop: which iteration and stage they fill.
  for (const StatementVisit& visit : statements) {
    if (visit.stmt->kind != ast::StmtKind::For) continue;
    const auto& loop = static_cast<const ast::ForStmt&>(*visit.stmt);
    if (!loop.iter || loop.iter->kind != ast::ExprKind::Call) continue;
    const auto& iter = static_cast<const ast::CallExpr&>(*loop.iter);
    if (!iter.callee || iter.callee->kind != ast::ExprKind::Name ||
        static_cast<const ast::NameExpr&>(*iter.callee).name != "pipelined")
      continue;
    std::string iv = loop.target && loop.target->kind == ast::ExprKind::Name
                         ? static_cast<const ast::NameExpr&>(*loop.target).name : "i";
    for (const auto& s : loop.body) {
      std::string_view name;
      const ast::CallExpr* call = s ? callOf(*s, &name) : nullptr;
      if (!call || (name != "copy_async" && name != "copy_bulk")) break;  // only the leading copies run ahead
      const ast::NameExpr* buffer = destinationBuffer(*call);
      auto staged = buffer ? bufferStages.find({visit.function, buffer->name}) : bufferStages.end();
      if (staged == bufferStages.end() || !visible(*s)) continue;
      int64_t stages = staged->second;
      std::string ahead = iv + " + " + std::to_string(stages - 1);
      hints.push_back(hintAt(file, s->range.end, "for " + ahead + ", stage (" + ahead + ") % " + std::to_string(stages),
                             "A leading copy of a pipelined loop: issued " + std::to_string(stages - 1) +
                                 " iteration(s) ahead, into stage (" + ahead + ") % " + std::to_string(stages) +
                                 " of its buffer."));
    }
  }
  return hints;
}

}  // namespace argus::lsp

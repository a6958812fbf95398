// Hover: the symbol under the cursor and the type of the innermost typed
// expression there, with the register layout spelled out for tiles.
#include <algorithm>
#include <sstream>

#include "lsp/builtins.h"
#include "lsp/features.h"
#include "support/render.h"

namespace argus::lsp {

namespace {

constexpr int kOwnershipRows = 8;

std::string shapeStr(const std::vector<int64_t>& shape) {
  std::string text = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) text += ", ";
    text += shape[i] < 0 ? std::string("?") : std::to_string(shape[i]);
  }
  if (shape.size() == 1) text += ",";
  return text + ")";
}

const char* kindWord(ir::TypeKind kind) {
  switch (kind) {
    case ir::TypeKind::Void: return "no value";
    case ir::TypeKind::Scalar: return "scalar";
    case ir::TypeKind::Tile: return "register tile";
    case ir::TypeKind::Tensor: return "tensor";
    case ir::TypeKind::Shared: return "shared buffer";
    case ir::TypeKind::View: return "view";
  }
  return "value";
}

std::string memoryOf(const ir::Type& type) {
  switch (type.kind) {
    case ir::TypeKind::Scalar: return "registers (the same in every thread)";
    case ir::TypeKind::Tile: return "registers";
    case ir::TypeKind::Tensor: return "global";
    case ir::TypeKind::Shared: return "shared";
    case ir::TypeKind::View: return type.space == ir::MemSpace::Shared ? "shared" : "global";
    case ir::TypeKind::Void: return "";
  }
  return "";
}

bool sensibleLayout(const ir::Layout& layout) {
  if (layout.parent.empty() || layout.parent.size() > 8) return false;
  for (int64_t extent : layout.parent)
    if (extent <= 0 || (extent & (extent - 1)) != 0 || extent > (1 << 24)) return false;
  return true;
}

std::string ownershipTable(const ir::Layout& layout, int64_t numWarps) {
  ir::Distribution dist = ir::Distribution::of(layout, numWarps);
  std::vector<int64_t> shape = layout.shape();
  int64_t total = 1;
  for (int64_t extent : shape) total *= extent;
  int64_t threads = numWarps * 32;
  std::ostringstream out;
  out << "| element | thread (warp, lane) | value | held by |\n|---|---|---|---|\n";
  int64_t rows = std::min<int64_t>(total, kOwnershipRows);
  for (int64_t linear = 0; linear < rows; ++linear) {
    std::vector<int64_t> coord(shape.size());
    int64_t rest = linear;
    for (size_t d = shape.size(); d-- > 0;) {
      coord[d] = rest % shape[d];
      rest /= shape[d];
    }
    int64_t owner = -1, value = -1, holders = 0;
    for (int64_t t = 0; t < threads; ++t) {
      int64_t v = dist.valueIndexOf(t, coord);
      if (v < 0) continue;
      ++holders;
      if (owner < 0 && dist.isPrimaryOwner(t)) {
        owner = t;
        value = v;
      }
    }
    out << "| " << shapeStr(coord) << " | ";
    if (owner >= 0) out << owner << " (" << owner / 32 << ", " << owner % 32 << ") | " << value << " | ";
    else out << "? | ? | ";
    out << holders << (holders == 1 ? " thread" : " threads") << " |\n";
  }
  if (total > rows) out << "\n(first " << rows << " of " << total << " elements)\n";
  return out.str();
}

}  // namespace

std::string describeType(const ir::Type& type, int64_t numWarps, bool warpsKnown) {
  std::ostringstream out;
  out << "```\n" << type.str() << "\n```\n\n";
  out << "| | |\n|---|---|\n";
  out << "| kind | " << kindWord(type.kind) << " |\n";
  if (type.kind != ir::TypeKind::Void) out << "| dtype | " << ir::dtypeName(type.dtype) << " |\n";
  if (type.kind != ir::TypeKind::Scalar && type.kind != ir::TypeKind::Void)
    out << "| shape | " << shapeStr(type.shape) << " |\n";
  if (std::string memory = memoryOf(type); !memory.empty()) out << "| memory | " << memory << " |\n";
  if (type.isTile()) {
    out << "| layout | `" << ir::layoutStr(type.layout) << "` |\n";
    if (sensibleLayout(type.layout) && numWarps > 0 && numWarps <= 32) {
      ir::Distribution dist = ir::Distribution::of(type.layout, numWarps);
      out << "| per thread | " << dist.valuesPerThread << (dist.valuesPerThread == 1 ? " value" : " values")
          << " |\n\n";
      out << "Which thread holds which element (" << numWarps << " warps"
          << (warpsKnown ? "" : ", assumed") << "):\n\n";
      out << ownershipTable(type.layout, numWarps);
    }
  }
  return out.str();
}

json hover(const Snapshot& snapshot, Position position) {
  const SourceFile& file = snapshot.file();
  uint32_t offset = offsetOf(file, position);
  SourceRange symbolRange;
  const sema::Symbol* symbol = symbolAt(snapshot, offset, &symbolRange);
  const ast::Expr* expr = expressionAt(snapshot, offset, [](const Snapshot& s, const ast::Expr& e) {
    return s.sema && s.sema->exprTypes.count(e.id) != 0;
  });
  // A symbol's own occurrence wins over an enclosing expression.
  if (symbol && expr && !(expr->range.begin >= symbolRange.begin && expr->range.end <= symbolRange.end))
    expr = nullptr;
  if (!symbol && !expr) return nullptr;

  std::ostringstream text;
  SourceRange range = symbol ? symbolRange : expr->range;
  if (symbol) {
    text << "**" << symbol->name << "**: " << sema::symbolKindName(symbol->kind) << "\n\n";
    if (symbol->kind == sema::Symbol::Kind::Builtin) {
      if (const BuiltinDoc* doc = findBuiltinDoc(symbol->name))
        text << "```\n" << doc->signature() << "\n```\n\n" << doc->summary << "\n\n";
      else if (!symbol->typeDescription.empty())
        text << "```\n" << symbol->typeDescription << "\n```\n\n";
    }
  }
  const ir::Type* type = expr ? &snapshot.sema->exprTypes.at(expr->id) : nullptr;
  if (!type && symbol) type = symbolType(snapshot, *symbol);
  if (type) {
    const ir::Function* kernel = kernelAt(snapshot, offset);
    text << describeType(*type, kernel ? kernel->numWarps : 4, kernel != nullptr);
  } else if (symbol && symbol->kind != sema::Symbol::Kind::Builtin && !symbol->typeDescription.empty()) {
    text << symbol->typeDescription << "\n\n";
  }
  std::string value = text.str();
  while (!value.empty() && value.back() == '\n') value.pop_back();
  return json{{"contents", {{"kind", "markdown"}, {"value", value}}}, {"range", toJson(rangeOf(file, range))}};
}

}  // namespace argus::lsp

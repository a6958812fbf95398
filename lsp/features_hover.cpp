// Hover: the symbol under the cursor and the type of the innermost typed
// expression there, with the register layout spelled out for tiles.
#include <algorithm>
#include <optional>
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

// The primary owner of a tile element (the replica that stores it), its value
// index there, and how many threads hold a copy.
struct Owner {
  int64_t thread = -1, value = -1, holders = 0;
};

Owner ownerOf(const ir::Distribution& dist, const std::vector<int64_t>& coord, int64_t threads) {
  Owner owner;
  for (int64_t t = 0; t < threads; ++t) {
    int64_t v = dist.valueIndexOf(t, coord);
    if (v < 0) continue;
    ++owner.holders;
    if (owner.thread < 0 && dist.isPrimaryOwner(t)) {
      owner.thread = t;
      owner.value = v;
    }
  }
  return owner;
}

// For a 2-D tile, a picture of its top-left corner: each cell names the thread
// that holds the element and the value index in that thread (`t33 v1`).
std::string ownershipGrid(const ir::Layout& layout, int64_t numWarps) {
  constexpr int64_t kRows = 4, kColumns = 8;
  ir::Distribution dist = ir::Distribution::of(layout, numWarps);
  std::vector<int64_t> shape = layout.shape();
  int64_t rows = std::min(shape[0], kRows), columns = std::min(shape[1], kColumns);
  std::ostringstream out;
  out << "| |";
  for (int64_t c = 0; c < columns; ++c) out << " " << c << " |";
  out << "\n|---|";
  for (int64_t c = 0; c < columns; ++c) out << "---|";
  out << "\n";
  for (int64_t r = 0; r < rows; ++r) {
    out << "| **" << r << "** |";
    for (int64_t c = 0; c < columns; ++c) {
      Owner owner = ownerOf(dist, {r, c}, numWarps * 32);
      if (owner.thread < 0) out << " ? |";
      else out << " t" << owner.thread << " v" << owner.value << " |";
    }
    out << "\n";
  }
  Owner first = ownerOf(dist, {0, 0}, numWarps * 32);
  out << "\n(`tT vV`: thread T holds it as its value V";
  if (first.holders > 1) out << "; each element is replicated in " << first.holders << " threads";
  if (rows < shape[0] || columns < shape[1])
    out << "; top-left " << rows << "x" << columns << " of " << shape[0] << "x" << shape[1];
  out << ")\n";
  return out.str();
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
    Owner owner = ownerOf(dist, coord, threads);
    out << "| " << shapeStr(coord) << " | ";
    if (owner.thread >= 0)
      out << owner.thread << " (" << owner.thread / 32 << ", " << owner.thread % 32 << ") | " << owner.value << " | ";
    else
      out << "? | ? | ";
    out << owner.holders << (owner.holders == 1 ? " thread" : " threads") << " |\n";
  }
  if (total > rows) out << "\n(first " << rows << " of " << total << " elements)\n";
  return out.str();
}

// The kernel's `warps`: from its Tile IR, or, when it did not check, from a
// literal `warps=` in its decorator. Unknown in device functions.
std::optional<int64_t> warpsAt(const Snapshot& snapshot, uint32_t offset) {
  if (const ir::Function* kernel = kernelAt(snapshot, offset)) return kernel->numWarps;
  const ast::FunctionDef* fn = functionAt(snapshot, offset);
  if (!fn) return std::nullopt;
  for (const ast::Decorator& d : fn->decorators) {
    if (d.name != "kernel") continue;
    if (!d.args) return 4;
    for (const ast::Argument& a : *d.args)
      if (a.keyword && *a.keyword == "warps" && a.value && a.value->kind == ast::ExprKind::Int)
        return static_cast<const ast::IntExpr&>(*a.value).value;
    return 4;  // the default
  }
  return std::nullopt;
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
      out << (type.layout.shape().size() == 2 ? ownershipGrid(type.layout, numWarps)
                                              : ownershipTable(type.layout, numWarps));
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
  // A member name (`.tile`, `.shape`, `.dtype`): its documentation first.
  const ast::Expr* attribute = expressionAt(snapshot, offset, [](const Snapshot&, const ast::Expr& e) {
    return e.kind == ast::ExprKind::Attribute;
  });
  const BuiltinDoc* member = nullptr;
  SourceRange memberRange;
  if (attribute && !symbol) {
    const auto& a = static_cast<const ast::AttributeExpr&>(*attribute);
    if (a.nameRange.begin <= offset && offset <= a.nameRange.end)
      for (const BuiltinDoc& doc : memberDocs())
        if (doc.name == a.name) {
          member = &doc;
          memberRange = a.nameRange;
        }
  }
  if (!symbol && !expr && !member) return nullptr;

  std::ostringstream text;
  SourceRange range = symbol ? symbolRange : member ? memberRange : expr->range;
  if (member) {
    text << "**" << member->name << "**: " << (member->params.empty() ? "attribute" : "method") << "\n\n";
    if (!member->params.empty()) text << "```\n" << member->signature() << "\n```\n\n";
    text << member->summary << "\n\n";
  }
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
  if (type && symbol && type->kind == ir::TypeKind::Tensor && !symbol->typeDescription.empty())
    text << symbol->typeDescription << "\n\n";  // names the runtime extents the type shows as `?`
  if (type) {
    std::optional<int64_t> warps = warpsAt(snapshot, offset);
    text << describeType(*type, warps.value_or(4), warps.has_value());
  } else if (symbol && symbol->kind != sema::Symbol::Kind::Builtin && !symbol->typeDescription.empty()) {
    text << symbol->typeDescription << "\n\n";
  }
  std::string value = text.str();
  while (!value.empty() && value.back() == '\n') value.pop_back();
  return json{{"contents", {{"kind", "markdown"}, {"value", value}}}, {"range", toJson(rangeOf(file, range))}};
}

}  // namespace argus::lsp

#include "layout/evaluate.h"

#include <algorithm>
#include <functional>
#include <map>

namespace argus::layout {
namespace {

// Internal control flow only: caught in evaluateExpression, never escapes.
struct EvalFailure {
  std::string message;
  TextRange range;
};

constexpr __int128 kLargestExtent = __int128{1} << 31;

[[noreturn]] void fail(std::string message, TextRange range) { throw EvalFailure{std::move(message), range}; }

const char* kindName(const Value& v) {
  switch (v.index()) {
    case 0: return std::get<IntTuple>(v).isLeaf() ? "an integer" : "a tuple";
    case 1: return "a layout";
    case 2: return "a tiler";
    case 3: return "a swizzle";
    case 4: return "a swizzled layout";
    case 5: return "a thread-value layout";
    default: return "a name";
  }
}

void checkBounds(const IntTuple& shape, const IntTuple& stride, TextRange range) {
  __int128 size = 1, cosize = 1;
  std::vector<int64_t> s = leaves(shape), d = leaves(stride);
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] <= 0) fail("shape " + toString(shape) + " has a non-positive extent " + std::to_string(s[i]), range);
    size *= s[i];
    cosize += static_cast<__int128>(s[i] - 1) * (d[i] < 0 ? -d[i] : d[i]);
    if (size > kLargestExtent || cosize > kLargestExtent)
      fail("the layout is too large for the calculator (size or cosize above 2^31)", range);
  }
}

// Compact strides (and cotargets) are running products of a shape's extents in
// 64 bits, so the shape is bounded before they are computed, not after.
void checkShapeSize(const IntTuple& shape, TextRange range) {
  __int128 size = 1;
  for (int64_t s : leaves(shape)) {
    size *= s < 0 ? -static_cast<__int128>(s) : s;
    if (size > kLargestExtent) fail("the layout is too large for the calculator (size or cosize above 2^31)", range);
  }
}

// Evaluating outside the domain extrapolates (as CuTe does). Each term of the
// offset is a coordinate part, never larger than the largest coordinate leaf,
// times a stride; bounding their sum keeps the 64-bit offset from overflowing.
constexpr __int128 kLargestOffset = __int128{1} << 61;

void checkReach(const Layout& layout, const IntTuple& coordinate, TextRange range) {
  __int128 largest = 0, reach = 0;
  for (int64_t c : leaves(coordinate)) largest = std::max(largest, c < 0 ? -static_cast<__int128>(c) : c);
  for (int64_t d : leaves(layout.stride())) {
    reach += largest * (d < 0 ? -static_cast<__int128>(d) : d);
    if (reach > kLargestOffset)
      fail("the coordinate " + toString(coordinate) + " is too far outside " + toString(layout) +
               " for the calculator (offsets above 2^61)",
           range);
  }
}

Layout checked(Result<Layout> result, TextRange range) {
  if (!result) fail(result.error().message, range);
  checkBounds(result->shape(), result->stride(), range);
  return std::move(result).value();
}

struct Call {
  const ExprNode& node;
  std::vector<Value> args;

  TextRange argRange(size_t i) const { return node.children[i].range; }
  void arity(size_t low, size_t high) const {
    if (args.size() >= low && args.size() <= high) return;
    std::string expected = low == high ? std::to_string(low) : std::to_string(low) + " to " + std::to_string(high);
    fail("'" + node.name + "' takes " + expected + " argument" + (high == 1 ? "" : "s") + ", not " +
             std::to_string(args.size()),
         node.range);
  }
  // A layout, or a shape read as a compact column-major layout.
  Layout layout(size_t i) const {
    if (auto* l = std::get_if<Layout>(&args[i])) return *l;
    if (auto* t = std::get_if<IntTuple>(&args[i])) {
      checkShapeSize(*t, argRange(i));
      checkBounds(*t, compactColMajor(*t), argRange(i));
      return makeLayout(*t);
    }
    fail(std::string("expected a layout here, found ") + kindName(args[i]), argRange(i));
  }
  IntTuple tuple(size_t i) const {
    if (auto* t = std::get_if<IntTuple>(&args[i])) return *t;
    fail(std::string("expected an integer or a tuple here, found ") + kindName(args[i]), argRange(i));
  }
  int64_t integer(size_t i) const {
    IntTuple t = tuple(i);
    if (!t.isLeaf()) fail("expected an integer here, found the tuple " + toString(t), argRange(i));
    return t.value();
  }
  // A tiler: `<...>`, a layout (whole), an integer n (n:1) or a shape (by-mode).
  Tiler tiler(size_t i) const {
    if (auto* t = std::get_if<Tiler>(&args[i])) return *t;
    if (auto* l = std::get_if<Layout>(&args[i])) return Tiler::whole(*l);
    if (auto* t = std::get_if<IntTuple>(&args[i])) {
      if (t->isLeaf()) return Tiler::whole(Layout(t->value(), 1));
      std::vector<Layout> modes;
      for (const IntTuple& m : t->children()) {
        checkShapeSize(m, argRange(i));
        modes.push_back(makeLayout(m));
      }
      return Tiler::perMode(std::move(modes));
    }
    fail(std::string("expected a tiler (a layout, a shape or <...>) here, found ") + kindName(args[i]),
         argRange(i));
  }
  std::string word(size_t i) const {
    if (auto* w = std::get_if<Word>(&args[i])) return w->name;
    fail(std::string("expected a name (such as bf16 or f32) here, found ") + kindName(args[i]), argRange(i));
  }
};

using Builtin = std::function<Value(const Call&)>;

Value modeOf(const Call& c) {
  c.arity(2, 8);
  Value current = c.args[0];
  for (size_t i = 1; i < c.args.size(); ++i) {
    int64_t index = c.integer(i);
    if (auto* l = std::get_if<Layout>(&current)) {
      if (index < 0 || static_cast<size_t>(index) >= l->rank())
        fail("mode " + std::to_string(index) + " does not exist: " + toString(*l) + " has rank " +
                 std::to_string(l->rank()), c.argRange(i));
      current = l->mode(static_cast<size_t>(index));
    } else {
      IntTuple t = std::get_if<IntTuple>(&current) ? std::get<IntTuple>(current) : c.tuple(0);
      if (index < 0 || static_cast<size_t>(index) >= t.rank())
        fail("element " + std::to_string(index) + " does not exist: " + toString(t) + " has rank " +
                 std::to_string(t.rank()), c.argRange(i));
      current = t.mode(static_cast<size_t>(index));
    }
  }
  return current;
}

Value tvBuiltin(const Call& c, Result<TVLayout> tv) {
  if (!tv) fail(tv.error().message, c.node.range);
  return *tv;
}

bool transposeFlag(const Call& c) {
  c.arity(0, 1);
  if (c.args.empty()) return false;
  std::string w = c.word(0);
  if (w != "trans") fail("the only option of '" + c.node.name + "' is 'trans'", c.argRange(0));
  return true;
}

const std::map<std::string, Builtin>& builtins() {
  using F = std::function<Result<Layout>(const Layout&, const Tiler&)>;
  auto tilerOp = [](F f) {
    return [f](const Call& c) -> Value { c.arity(2, 2); return checked(f(c.layout(0), c.tiler(1)), c.node.range); };
  };
  static const std::map<std::string, Builtin> table = {
      {"size", [](const Call& c) -> Value {
         c.arity(1, 1);
         if (auto* s = std::get_if<ComposedLayout>(&c.args[0])) return IntTuple(s->size());
         if (auto* tv = std::get_if<TVLayout>(&c.args[0])) return IntTuple(tv->layout.size());
         return IntTuple(c.layout(0).size());
       }},
      {"cosize", [](const Call& c) -> Value { c.arity(1, 1); return IntTuple(c.layout(0).cosize()); }},
      {"rank", [](const Call& c) -> Value {
         c.arity(1, 1);
         return IntTuple(static_cast<int64_t>(c.layout(0).rank()));
       }},
      {"depth", [](const Call& c) -> Value { c.arity(1, 1); return IntTuple(int64_t{c.layout(0).depth()}); }},
      {"shape", [](const Call& c) -> Value { c.arity(1, 1); return c.layout(0).shape(); }},
      {"stride", [](const Call& c) -> Value { c.arity(1, 1); return c.layout(0).stride(); }},
      {"get", modeOf},
      {"mode", modeOf},
      {"layout", modeOf},
      {"coalesce", [](const Call& c) -> Value {
         c.arity(1, 2);
         if (c.args.size() == 2) return coalesce(c.layout(0), c.tuple(1));
         return coalesce(c.layout(0));
       }},
      {"flatten", [](const Call& c) -> Value {
         c.arity(1, 1);
         if (auto* t = std::get_if<IntTuple>(&c.args[0])) return flatten(*t);
         return flatten(c.layout(0));
       }},
      {"filter", [](const Call& c) -> Value { c.arity(1, 1); return filter(c.layout(0)); }},
      {"composition", [](const Call& c) -> Value {
         c.arity(2, 2);
         if (auto* s = std::get_if<ComposedLayout>(&c.args[0])) {
           Result<ComposedLayout> r = composition(*s, c.layout(1));
           if (!r) fail(r.error().message, c.node.range);
           return *r;
         }
         if (auto* sw = std::get_if<Swizzle>(&c.args[0])) return ComposedLayout{*sw, 0, c.layout(1)};
         return checked(composition(c.layout(0), c.tiler(1)), c.node.range);
       }},
      {"complement", [](const Call& c) -> Value {
         c.arity(1, 2);
         if (c.args.size() == 1) return checked(complement(c.layout(0)), c.node.range);
         Layout layout = c.layout(0);
         checkShapeSize(c.tuple(1), c.argRange(1));
         return checked(complement(layout, product(c.tuple(1))), c.node.range);
       }},
      {"logical_divide", tilerOp(static_cast<Result<Layout> (*)(const Layout&, const Tiler&)>(logicalDivide))},
      {"zipped_divide", tilerOp(zippedDivide)},
      {"tiled_divide", tilerOp(tiledDivide)},
      {"flat_divide", tilerOp(flatDivide)},
      {"logical_product", tilerOp(logicalProduct)},
      {"zipped_product", tilerOp(zippedProduct)},
      {"blocked_product", [](const Call& c) -> Value {
         c.arity(2, 2);
         return checked(blockedProduct(c.layout(0), c.layout(1)), c.node.range);
       }},
      {"raked_product", [](const Call& c) -> Value {
         c.arity(2, 2);
         return checked(rakedProduct(c.layout(0), c.layout(1)), c.node.range);
       }},
      {"right_inverse", [](const Call& c) -> Value { c.arity(1, 1); return rightInverse(c.layout(0)); }},
      {"left_inverse", [](const Call& c) -> Value {
         c.arity(1, 1);
         return checked(leftInverse(c.layout(0)), c.node.range);
       }},
      {"make_layout", [](const Call& c) -> Value {
         c.arity(1, 16);
         if (std::holds_alternative<Layout>(c.args[0]) || c.args.size() > 2) {
           std::vector<Layout> modes;
           for (size_t i = 0; i < c.args.size(); ++i) modes.push_back(c.layout(i));
           return checked(concatenate(modes), c.node.range);
         }
         if (c.args.size() == 1) {
           checkShapeSize(c.tuple(0), c.node.range);
           return checked(makeLayout(c.tuple(0)), c.node.range);
         }
         return checked(makeLayout(c.tuple(0), c.tuple(1)), c.node.range);
       }},
      {"make_ordered_layout", [](const Call& c) -> Value {
         c.arity(2, 2);
         checkShapeSize(c.tuple(0), c.node.range);
         return checked(makeOrderedLayout(c.tuple(0), c.tuple(1)), c.node.range);
       }},
      {"col_major", [](const Call& c) -> Value {
         c.arity(1, 1);
         checkShapeSize(c.tuple(0), c.node.range);
         return checked(makeColMajor(c.tuple(0)), c.node.range);
       }},
      {"row_major", [](const Call& c) -> Value {
         c.arity(1, 1);
         checkShapeSize(c.tuple(0), c.node.range);
         return checked(makeRowMajor(c.tuple(0)), c.node.range);
       }},
      {"mma_m16n8k16_a", [](const Call& c) -> Value { c.arity(1, 1); return tvBuiltin(c, mmaM16N8K16('A', c.word(0))); }},
      {"mma_m16n8k16_b", [](const Call& c) -> Value { c.arity(1, 1); return tvBuiltin(c, mmaM16N8K16('B', c.word(0))); }},
      {"mma_m16n8k16_c", [](const Call& c) -> Value { c.arity(1, 1); return tvBuiltin(c, mmaM16N8K16('C', c.word(0))); }},
      {"wgmma_m64nNk16_d", [](const Call& c) -> Value {
         c.arity(2, 2);
         return tvBuiltin(c, wgmmaM64NK16Accumulator(c.integer(0), c.word(1)));
       }},
      {"wgmma_m64nNk16_a", [](const Call& c) -> Value { c.arity(1, 1); return tvBuiltin(c, wgmmaM64NK16A(c.word(0))); }},
      {"ldmatrix_x1", [](const Call& c) -> Value { return tvBuiltin(c, ldmatrix(1, transposeFlag(c))); }},
      {"ldmatrix_x2", [](const Call& c) -> Value { return tvBuiltin(c, ldmatrix(2, transposeFlag(c))); }},
      {"ldmatrix_x4", [](const Call& c) -> Value { return tvBuiltin(c, ldmatrix(4, transposeFlag(c))); }},
      {"stmatrix_x1", [](const Call& c) -> Value { return tvBuiltin(c, ldmatrix(1, transposeFlag(c))); }},
      {"stmatrix_x2", [](const Call& c) -> Value { return tvBuiltin(c, ldmatrix(2, transposeFlag(c))); }},
      {"stmatrix_x4", [](const Call& c) -> Value { return tvBuiltin(c, ldmatrix(4, transposeFlag(c))); }},
      {"tv_inverse", [](const Call& c) -> Value {
         c.arity(1, 1);
         auto* tv = std::get_if<TVLayout>(&c.args[0]);
         if (!tv) fail(std::string("expected a thread-value layout here, found ") + kindName(c.args[0]), c.argRange(0));
         return checked(tileToThreadValue(*tv), c.node.range);
       }},
      {"idx2crd", [](const Call& c) -> Value {
         c.arity(2, 2);
         checkShapeSize(c.tuple(1), c.argRange(1));
         return makeLayout(c.tuple(1)).coordinateOf(c.integer(0));
       }},
      {"crd2idx", [](const Call& c) -> Value {
         c.arity(2, 3);
         Layout l = c.args.size() == 3 ? checked(makeLayout(c.tuple(1), c.tuple(2)), c.node.range) : c.layout(1);
         checkReach(l, c.tuple(0), c.node.range);
         Result<int64_t> index = l(c.tuple(0));
         if (!index) fail(index.error().message, c.node.range);
         return IntTuple(*index);
       }},
      {"tv_layout", [](const Call& c) -> Value {
         c.arity(2, 2);
         IntTuple tile = c.tuple(1);
         if (tile.isLeaf() || tile.rank() != 2 || !tile.mode(0).isLeaf() || !tile.mode(1).isLeaf())
           fail("the tile of a thread-value layout is (rows,cols), e.g. (16,8)", c.argRange(1));
         checkShapeSize(tile, c.argRange(1));  // rows * cols is computed in 64 bits downstream
         return tvBuiltin(c, makeTVLayout(c.layout(0), tile.mode(0).value(), tile.mode(1).value()));
       }},
  };
  return table;
}

size_t editDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t next = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1])});
      diagonal = row[j];
      row[j] = next;
    }
  }
  return row[b.size()];
}

std::string suggestion(const std::string& name) {
  std::string best;
  size_t bestDistance = 3;
  for (const auto& [candidate, _] : builtins()) {
    size_t d = editDistance(name, candidate);
    if (d < bestDistance) {
      bestDistance = d;
      best = candidate;
    }
  }
  return best.empty() ? "" : "; did you mean '" + best + "'?";
}

Value evaluate(const ExprNode& node);

IntTuple coordinateArgument(const ExprNode& apply) {
  std::vector<IntTuple> parts;
  for (size_t i = 1; i < apply.children.size(); ++i) {
    Value v = evaluate(apply.children[i]);
    auto* t = std::get_if<IntTuple>(&v);
    if (!t) fail(std::string("a coordinate is an integer or a tuple, not ") + kindName(v), apply.children[i].range);
    parts.push_back(*t);
  }
  if (parts.size() == 1) return parts[0];
  return IntTuple::tuple(std::move(parts));
}

Value apply(const ExprNode& node) {
  Value target = evaluate(node.children[0]);
  if (node.children.size() < 2) fail("a coordinate is needed between the parentheses", node.range);
  IntTuple coordinate = coordinateArgument(node);
  auto index = [&]() {
    if (!coordinate.isLeaf()) fail("expected an integer index, found " + toString(coordinate), node.range);
    return coordinate.value();
  };
  if (auto* l = std::get_if<Layout>(&target)) {
    checkReach(*l, coordinate, node.range);
    Result<int64_t> offset = (*l)(coordinate);
    if (!offset) fail(offset.error().message, node.range);
    return IntTuple(*offset);
  }
  if (auto* sw = std::get_if<Swizzle>(&target)) return IntTuple((*sw)(index()));
  if (auto* composed = std::get_if<ComposedLayout>(&target)) {
    int64_t at = index();
    checkReach(composed->layout, coordinate, node.range);
    return IntTuple((*composed)(at));
  }
  if (auto* tv = std::get_if<TVLayout>(&target)) {
    if (coordinate.rank() != 2 || !coordinate.mode(0).isLeaf() || !coordinate.mode(1).isLeaf())
      fail("a thread-value layout is evaluated at (thread, value)", node.range);
    checkReach(tv->layout, coordinate, node.range);
    int64_t t = coordinate.mode(0).value(), v = coordinate.mode(1).value();
    return IntTuple::tuple({tv->row(t, v), tv->col(t, v)});
  }
  fail(std::string("cannot evaluate ") + kindName(target) + " at a coordinate", node.children[0].range);
}

Value compose(const ExprNode& node) {
  Value left = evaluate(node.children[0]);
  Value right = evaluate(node.children[1]);
  TextRange rightRange = node.children[1].range;
  if (auto* sw = std::get_if<Swizzle>(&left)) {
    // `Sw o 32` is completed by `o layout`; until then its layout is the identity 1:1.
    if (auto* t = std::get_if<IntTuple>(&right); t && t->isLeaf()) return ComposedLayout{*sw, t->value(), Layout(1, 1)};
    if (auto* l = std::get_if<Layout>(&right)) return ComposedLayout{*sw, 0, *l};
    fail(std::string("a swizzle composes with an offset or a layout, not ") + kindName(right), rightRange);
  }
  if (auto* composed = std::get_if<ComposedLayout>(&left)) {
    auto* l = std::get_if<Layout>(&right);
    if (!l) fail(std::string("a swizzled layout composes with a layout, not ") + kindName(right), rightRange);
    if (composed->layout == Layout(1, 1)) return ComposedLayout{composed->swizzle, composed->offset, *l};
    Result<ComposedLayout> r = composition(*composed, *l);
    if (!r) fail(r.error().message, node.range);
    return *r;
  }
  Call call{node, {left, right}};
  return checked(composition(call.layout(0), call.tiler(1)), node.range);
}

Value evaluate(const ExprNode& node) {
  switch (node.kind) {
    case ExprNode::Kind::Tuple:
      return node.shape;  // may hold negative integers: it is a shape only where used as one
    case ExprNode::Kind::Layout: {
      Result<Layout> l = makeLayout(node.shape, node.stride);
      return checked(l, node.range);
    }
    case ExprNode::Kind::Tiler: {
      std::vector<Layout> modes;
      for (size_t i = 0; i < node.children.size(); ++i) {
        Value v = evaluate(node.children[i]);
        if (std::holds_alternative<Tiler>(v)) fail("nested tilers are not supported", node.children[i].range);
        if (!std::holds_alternative<Layout>(v) && !std::holds_alternative<IntTuple>(v))
          fail(std::string("a tiler mode is a layout or a shape, not ") + kindName(v), node.children[i].range);
        Layout mode = std::holds_alternative<Layout>(v) ? std::get<Layout>(v)
                      : std::get<IntTuple>(v).isLeaf() ? Layout(std::get<IntTuple>(v).value(), 1)
                                                        : makeLayout(std::get<IntTuple>(v));
        checkBounds(mode.shape(), mode.stride(), node.children[i].range);
        modes.push_back(mode);
      }
      return Tiler::perMode(std::move(modes));
    }
    case ExprNode::Kind::Swizzle: {
      Result<Swizzle> sw = Swizzle::make(node.swizzle[0], node.swizzle[1], node.swizzle[2]);
      if (!sw) fail(sw.error().message, node.range);
      return *sw;
    }
    case ExprNode::Kind::Word:
      if (builtins().count(node.name))
        fail("'" + node.name + "' is a function: call it as " + node.name + "(...)", node.range);
      return Word{node.name};
    case ExprNode::Kind::Call: {
      auto found = builtins().find(node.name);
      if (found == builtins().end())
        fail("unknown function '" + node.name + "'" + suggestion(node.name), {node.range.begin, node.range.begin + node.name.size()});
      Call call{node, {}};
      for (const ExprNode& arg : node.children) call.args.push_back(evaluate(arg));
      return found->second(call);
    }
    case ExprNode::Kind::Compose:
      return compose(node);
    case ExprNode::Kind::Apply:
      return apply(node);
  }
  fail("unsupported expression", node.range);
}

}  // namespace

EvalResult evaluateExpression(std::string_view text) {
  ParseResult parsed = parseExpression(text);
  if (auto* error = std::get_if<ExpressionError>(&parsed)) return *error;
  const ExprNode& root = std::get<ExprNode>(parsed);
  try {
    Value value = evaluate(root);
    if (auto* w = std::get_if<Word>(&value))
      return ExpressionError{"unknown name '" + w->name + "'" + suggestion(w->name), root.range};
    return value;
  } catch (const EvalFailure& failure) {
    return ExpressionError{failure.message, failure.range};
  } catch (const std::exception& e) {
    return ExpressionError{std::string("internal error: ") + e.what(), root.range};
  }
}

Result<Layout> parseLayout(std::string_view text) {
  EvalResult result = evaluateExpression(text);
  if (auto* error = std::get_if<ExpressionError>(&result)) return makeError(error->message);
  const Value& value = std::get<Value>(result);
  if (auto* l = std::get_if<Layout>(&value)) return *l;
  if (auto* t = std::get_if<IntTuple>(&value)) return makeLayout(*t);
  return makeError(std::string("expected a layout, found ") + kindName(value));
}

std::string toString(const Tiler& tiler) {
  if (!tiler.byMode) return toString(tiler.modes[0]);
  std::string out = "<";
  for (size_t i = 0; i < tiler.modes.size(); ++i) out += (i ? "," : "") + toString(tiler.modes[i]);
  return out + ">";
}

std::string toString(const Value& value) {
  return std::visit(
      [](const auto& v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, Word>) return v.name;
        else if constexpr (std::is_same_v<T, TVLayout>) return toString(v.layout);
        else return toString(v);
      },
      value);
}

}  // namespace argus::layout

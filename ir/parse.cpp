// The reader of ir/print.cpp's text. The text is line-oriented: a kernel header line, its
// grid/const/require lines, then one op per line, with `for`/`if` lines opening regions that
// `} else {` and `}` lines close. Regions are kept on an explicit stack, and expressions
// (launch expressions, assertion conditions) nest at most kMaxDepth deep, so no input makes
// the reader recurse without bound.
#include "ir/parse.h"

#include <cctype>
#include <charconv>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>
#include <utility>
#include <vector>

#include "ir/ops.h"

namespace argus::ir {

namespace {

constexpr int kMaxDepth = 200;

struct ParseError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

bool isWordChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// A cursor over one line.
class Line {
 public:
  Line(std::string_view text, int number) : text_(text), number_(number) {}

  [[noreturn]] void fail(const std::string& what) const {
    throw ParseError("line " + std::to_string(number_) + ", column " + std::to_string(pos_ + 1) + ": " + what);
  }
  void skipSpace() {
    while (pos_ < text_.size() && text_[pos_] == ' ') ++pos_;
  }
  // The character `offset` places after the next non-space one ('\0' past the end).
  char at(size_t offset = 0) {
    skipSpace();
    return pos_ + offset < text_.size() ? text_[pos_ + offset] : '\0';
  }
  bool atDigit(size_t offset = 0) { return std::isdigit(static_cast<unsigned char>(at(offset))) != 0; }
  // The next space-delimited token, without consuming it.
  std::string_view token() {
    skipSpace();
    size_t end = text_.find(' ', pos_);
    return text_.substr(pos_, end == std::string_view::npos ? std::string_view::npos : end - pos_);
  }
  // The printer's trailing `// line:col` (not a floor division: that is followed by an operand).
  bool atLocation() {
    skipSpace();
    std::string_view rest = text_.substr(pos_);
    if (rest.substr(0, 3) != "// ") return false;
    rest.remove_prefix(3);
    size_t colon = rest.find(':');
    return colon != std::string_view::npos && colon > 0 && rest.find_first_not_of("0123456789:") == std::string_view::npos;
  }
  bool atEnd() {
    skipSpace();
    return pos_ >= text_.size() || atLocation();
  }
  // A line of its own that is a comment (`// RUN: ...` in a test file, say).
  bool isComment() {
    skipSpace();
    return text_.substr(pos_, 2) == "//";
  }
  bool peek(std::string_view s) {
    skipSpace();
    return text_.substr(pos_, s.size()) == s;
  }
  // A word matches only whole: `peekWord("for")` is false on `format`.
  bool peekWord(std::string_view w) {
    return peek(w) && (pos_ + w.size() >= text_.size() || !isWordChar(text_[pos_ + w.size()]));
  }
  bool eat(std::string_view s) {
    if (!peek(s)) return false;
    pos_ += s.size();
    return true;
  }
  bool eatWord(std::string_view w) {
    if (!peekWord(w)) return false;
    pos_ += w.size();
    return true;
  }
  void expect(std::string_view s) {
    if (!eat(s)) fail("expected '" + std::string(s) + "'");
  }
  size_t position() {
    skipSpace();
    return pos_;
  }
  void seek(size_t pos) { pos_ = pos; }
  // Fails pointing at the start of the word read last (an unknown name).
  [[noreturn]] void failWord(const std::string& what) {
    pos_ = wordStart_;
    fail(what);
  }
  std::string word() {
    skipSpace();
    size_t start = pos_;
    wordStart_ = start;
    while (pos_ < text_.size() && isWordChar(text_[pos_])) ++pos_;
    if (start == pos_) fail("expected a name");
    return std::string(text_.substr(start, pos_ - start));
  }
  int64_t integer() {
    skipSpace();
    int64_t v = 0;
    auto [end, ec] = std::from_chars(text_.data() + pos_, text_.data() + text_.size(), v);
    if (ec != std::errc()) fail("expected an integer");
    pos_ = static_cast<size_t>(end - text_.data());
    return v;
  }
  double number() {
    skipSpace();
    size_t start = pos_;
    while (pos_ < text_.size() && (isWordChar(text_[pos_]) || text_[pos_] == '.' || text_[pos_] == '-' ||
                                   text_[pos_] == '+'))
      ++pos_;
    std::string s(text_.substr(start, pos_ - start));
    if (s == "inf") return std::numeric_limits<double>::infinity();
    if (s == "-inf") return -std::numeric_limits<double>::infinity();
    if (s == "nan" || s == "-nan") return std::numeric_limits<double>::quiet_NaN();
    double v = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size()) {
      pos_ = start;
      fail("expected a number");
    }
    return v;
  }
  std::string quoted() {
    expect("\"");
    std::string out;
    while (pos_ < text_.size() && text_[pos_] != '"') {
      char c = text_[pos_++];
      if (c == '\\' && pos_ < text_.size()) {
        char e = text_[pos_++];
        out += e == 'n' ? '\n' : e;
      } else {
        out += c;
      }
    }
    expect("\"");
    return out;
  }
  // `%name.12` or `%12`: the value id and the name. With `tagAfter`, `%name.12.origin[1]`
  // also splits off what follows the id (an assertion's tag).
  std::pair<ValueId, std::string> valueRef(std::string* tagAfter = nullptr) {
    expect("%");
    size_t start = pos_;
    while (pos_ < text_.size() && (isWordChar(text_[pos_]) || text_[pos_] == '.')) ++pos_;
    std::string_view all = text_.substr(start, pos_ - start);
    std::vector<std::string_view> parts;
    for (size_t from = 0;;) {
      size_t dot = all.find('.', from);
      parts.push_back(all.substr(from, dot == std::string_view::npos ? std::string_view::npos : dot - from));
      if (dot == std::string_view::npos) break;
      from = dot + 1;
    }
    auto digits = [](std::string_view s) {
      return !s.empty() && s.find_first_not_of("0123456789") == std::string_view::npos;
    };
    // The id is the last all-digit part (names are identifiers, which start with a letter).
    size_t idPart = parts.size();
    for (size_t i = parts.size(); i-- > 0;)
      if (digits(parts[i])) {
        idPart = i;
        break;
      }
    if (idPart == parts.size()) fail("expected a value like %name.3 or %3");
    if (idPart + 1 < parts.size()) {
      if (!tagAfter) fail("unexpected '." + std::string(parts[idPart + 1]) + "' after a value");
      std::string tag;
      for (size_t i = idPart + 1; i < parts.size(); ++i) tag += (i > idPart + 1 ? "." : "") + std::string(parts[i]);
      *tagAfter = tag;
    }
    std::string name;
    for (size_t i = 0; i < idPart; ++i) name += (i ? "." : "") + std::string(parts[i]);
    uint64_t id = 0;
    std::from_chars(parts[idPart].data(), parts[idPart].data() + parts[idPart].size(), id);
    if (id >= (1u << 24)) fail("value id " + std::to_string(id) + " is too large");
    return {static_cast<ValueId>(id), name};
  }

 private:
  std::string_view text_;
  int number_;
  size_t pos_ = 0;
  size_t wordStart_ = 0;
};

std::vector<int64_t> intList(Line& in, bool questionIsRuntime = false) {
  std::vector<int64_t> out;
  in.expect("[");
  if (in.eat("]")) return out;
  do {
    if (questionIsRuntime && in.eat("?")) out.push_back(-1);
    else out.push_back(in.integer());
  } while (in.eat(","));
  in.expect("]");
  return out;
}

DType dtype(Line& in) {
  std::string w = in.word();
  std::optional<DType> t = dtypeFromName(w);
  if (!t) in.failWord("unknown dtype '" + w + "'");
  return *t;
}

Layout layout(Line& in) {
  in.expect("#");
  std::string kind = in.word();
  in.expect("<");
  Layout l;
  l.parent = intList(in);
  if (kind == "mma") {
    l.kind = LayoutKind::Mma;
  } else if (kind == "wgmma") {
    l.kind = LayoutKind::Mma;
    l.wgmma = true;
  } else if (kind != "blocked") {
    in.failWord("unknown layout '#" + kind + "'");
  }
  while (in.eat(",")) {
    std::string key = in.word();
    in.expect("=");
    if (key == "warps") {
      std::vector<int64_t> w = intList(in);
      if (w.size() != 2) in.fail("warps=[M, N] takes two numbers");
      l.warpsM = w[0];
      l.warpsN = w[1];
    } else if (key == "warpgroups") {
      l.warpsM = 4 * in.integer();
      l.warpsN = 1;
    } else if (key == "reduced") {
      for (int64_t axis : intList(in)) {
        if (axis < 0 || axis >= 32) in.fail("reduced axis out of range");
        l.reducedMask |= 1u << axis;
      }
    } else if (key == "vec") {
      l.vec = in.integer();
    } else {
      in.failWord("unknown layout parameter '" + key + "'");
    }
  }
  in.expect(">");
  return l;
}

Swizzle swizzleSuffix(Line& in, const std::vector<int64_t>& shape) {
  Swizzle s;
  if (in.eatWord("swizzle")) {
    in.expect("<");
    s.bits = static_cast<int>(in.integer());
    in.expect(",");
    s.base = static_cast<int>(in.integer());
    in.expect(",");
    s.shift = static_cast<int>(in.integer());
    in.expect(">");
    if (in.eat(",")) {
      if (!in.eatWord("panels")) in.fail("expected 'panels'");
      in.expect("<");
      s.panelCols = in.integer();
      if (in.eat(",")) {
        s.rows = in.integer();
        in.expect(",");
        s.cols = in.integer();
      } else if (shape.size() >= 2) {
        s.rows = shape[shape.size() - 2];
        s.cols = shape.back();
      }
      in.expect(">");
    }
  }
  return s;
}

Type type(Line& in) {
  if (in.eatWord("void")) return Type::voidType();
  if (in.eatWord("tile")) {
    in.expect("<");
    DType t = dtype(in);
    in.expect(",");
    std::vector<int64_t> shape = intList(in);
    in.expect(",");
    Type ty = Type::tile(t, layout(in));
    if (ty.shape != shape) in.fail("the tile's shape differs from its layout's");
    in.expect(">");
    return ty;
  }
  if (in.eatWord("tensor")) {
    in.expect("<");
    DType t = dtype(in);
    in.expect(",");
    Type ty = Type::tensor(t, intList(in, true));
    in.expect(">");
    return ty;
  }
  const bool shared = in.peekWord("shared");
  if (shared || in.peekWord("view")) {
    in.word();
    in.expect("<");
    MemSpace space = MemSpace::Shared;
    if (!shared) {
      std::string s = in.word();
      if (s == "global") space = MemSpace::Global;
      else if (s != "shared") in.failWord("expected 'global' or 'shared'");
      in.expect(",");
    }
    DType t = dtype(in);
    in.expect(",");
    std::vector<int64_t> shape = intList(in);
    Type ty = shared ? Type::shared(t, shape) : Type::view(space, t, shape);
    if (in.eat(",")) ty.swizzle = swizzleSuffix(in, shape);
    in.expect(">");
    return ty;
  }
  return Type::scalar(dtype(in));
}

// Launch expressions as LaunchExpr::str prints them: precedence climbing, depth-limited.
class LaunchParser {
 public:
  LaunchParser(Line& in, const std::vector<std::string>& sizeNames) : in_(in), sizeNames_(sizeNames) {}

  LaunchExpr expr(int minPrec = 1, int depth = 0) {
    if (depth > kMaxDepth) in_.fail("expression nested too deeply");
    LaunchExpr lhs = unary(depth);
    for (;;) {
      std::optional<std::pair<LaunchExpr::Kind, int>> op = infix();
      if (!op || op->second < minPrec) return lhs;
      consumeInfix();
      LaunchExpr rhs = expr(op->second + 1, depth + 1);
      lhs = LaunchExpr{op->first, 0, {std::move(lhs), std::move(rhs)}};
    }
  }

 private:
  using K = LaunchExpr::Kind;

  std::optional<std::pair<K, int>> infix() {
    static const std::pair<std::string_view, std::pair<K, int>> kOps[] = {
        {"or", {K::Or, 1}}, {"and", {K::And, 2}}, {"<=", {K::Le, 4}}, {">=", {K::Ge, 4}}, {"==", {K::Eq, 4}},
        {"!=", {K::Ne, 4}}, {"<", {K::Lt, 4}},    {">", {K::Gt, 4}},   {"+", {K::Add, 5}},  {"-", {K::Sub, 5}},
        {"*", {K::Mul, 6}}, {"//", {K::FloorDiv, 6}}, {"%", {K::Mod, 6}},
    };
    for (const auto& [spelling, op] : kOps) {
      bool word = spelling == "or" || spelling == "and";
      if (word ? in_.peekWord(spelling) : in_.peek(spelling)) {
        if (spelling == "//" && in_.atLocation()) return std::nullopt;
        pending_ = spelling;
        return op;
      }
    }
    return std::nullopt;
  }
  void consumeInfix() { in_.eat(pending_); }

  LaunchExpr unary(int depth) {
    if (depth > kMaxDepth) in_.fail("expression nested too deeply");
    if (in_.eatWord("not")) return LaunchExpr{K::Not, 0, {expr(4, depth + 1)}};
    if (in_.eat("(")) {
      LaunchExpr inner = expr(1, depth + 1);
      in_.expect(")");
      return inner;
    }
    for (auto [name, kind] : {std::pair{"cdiv", K::CeilDiv}, std::pair{"min", K::Min}, std::pair{"max", K::Max}}) {
      if (in_.peek(std::string(name) + "(")) {
        in_.word();
        in_.expect("(");
        LaunchExpr a = expr(1, depth + 1);
        in_.expect(",");
        LaunchExpr b = expr(1, depth + 1);
        in_.expect(")");
        return LaunchExpr{kind, 0, {std::move(a), std::move(b)}};
      }
    }
    if (in_.atDigit() || (in_.at() == '-' && in_.atDigit(1))) return LaunchExpr{K::Const, in_.integer(), {}};
    if (in_.eat("size#")) return LaunchExpr{K::Size, in_.integer(), {}};
    std::string name = in_.word();
    for (size_t i = 0; i < sizeNames_.size(); ++i)
      if (sizeNames_[i] == name) return LaunchExpr{K::Size, static_cast<int64_t>(i), {}};
    in_.failWord("'" + name + "' is not a runtime size of this kernel");
  }

  Line& in_;
  const std::vector<std::string>& sizeNames_;
  std::string_view pending_;
};

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {
    for (size_t from = 0; from <= text.size();) {
      size_t end = text.find('\n', from);
      if (end == std::string_view::npos) end = text.size();
      lines_.push_back(text.substr(from, end - from));
      from = end + 1;
    }
  }

  std::unique_ptr<Module> run() {
    auto module = std::make_unique<Module>();
    while (next_ < lines_.size()) {
      Line in = line(next_);
      if (in.atEnd() || in.isComment()) {
        ++next_;
        continue;
      }
      module->functions.push_back(function());
    }
    return module;
  }

 private:
  Line line(size_t i) const { return Line(lines_[i], static_cast<int>(i + 1)); }

  // The range of line i's op in the text: from its first non-space character to the end of
  // the line, less a trailing location comment.
  SourceRange rangeOfLine(size_t i) const {
    std::string_view l = lines_[i];
    const auto offset = static_cast<uint32_t>(l.data() - text_.data());
    size_t begin = l.find_first_not_of(' ');
    if (begin == std::string_view::npos) return SourceRange{offset, offset};
    size_t end = l.size();
    if (size_t comment = l.rfind("  // "); comment != std::string_view::npos && Line(l.substr(comment), 0).atLocation())
      end = comment;
    while (end > begin && l[end - 1] == ' ') --end;
    return SourceRange{offset + static_cast<uint32_t>(begin), offset + static_cast<uint32_t>(end)};
  }

  // ------------------------------------------------------------ values
  Value& slot(Line& in, ValueId id) {
    if (id >= fn_->values.size()) fn_->values.resize(id + 1);
    if (defined_.size() < fn_->values.size()) defined_.resize(fn_->values.size(), false);
    (void)in;
    return fn_->values[id];
  }
  ValueId define(Line& in, std::pair<ValueId, std::string> ref, Type type, Op* def, uint32_t index) {
    Value& v = slot(in, ref.first);
    if (defined_[ref.first]) in.fail("value %" + std::to_string(ref.first) + " is defined twice");
    defined_[ref.first] = true;
    v.type = std::move(type);
    v.name = std::move(ref.second);
    v.def = def;
    v.resultIndex = index;
    return ref.first;
  }
  ValueId use(Line& in, std::string* tag = nullptr) {
    const size_t at = in.position();
    auto [id, name] = in.valueRef(tag);
    if (id >= defined_.size() || !defined_[id]) {
      in.seek(at);
      in.fail("%" + std::to_string(id) + " is used before it is defined");
    }
    return id;
  }
  std::vector<ValueId> uses(Line& in) {
    std::vector<ValueId> out;
    if (!in.peek("%")) return out;
    do out.push_back(use(in));
    while (in.eat(",") && in.peek("%"));
    return out;
  }

  // ------------------------------------------------------------ kernel
  std::unique_ptr<Function> function() {
    auto fn = std::make_unique<Function>();
    fn_ = fn.get();
    defined_.clear();
    Line in = line(next_++);
    if (!in.eatWord("kernel")) in.fail("expected 'kernel @name('");
    in.expect("@");
    fn->name = in.word();
    in.expect("(");
    struct PendingDims {
      size_t param;
      std::vector<std::string> dims;
    };
    std::vector<PendingDims> pending;
    if (!in.eat(")")) {
      do {
        auto ref = in.valueRef();
        in.expect(":");
        Param p;
        p.name = ref.second;
        if (in.eatWord("tensor")) {
          p.kind = ParamKind::Tensor;
          in.expect("<");
          p.dtype = dtype(in);
          in.expect(",");
          in.expect("[");
          PendingDims dims{fn->params.size(), {}};
          if (!in.eat("]")) {
            do {
              if (in.atDigit()) dims.dims.push_back(std::to_string(in.integer()));
              else dims.dims.push_back(in.word());
            } while (in.eat(","));
            in.expect("]");
          }
          in.expect(">");
          std::vector<int64_t> shape;
          for (const std::string& d : dims.dims) shape.push_back(std::isdigit(static_cast<unsigned char>(d[0])) ? std::stoll(d) : -1);
          pending.push_back(std::move(dims));
          p.value = define(in, ref, Type::tensor(p.dtype, shape), nullptr, 0);
        } else {
          p.dtype = dtype(in);
          p.kind = in.eatWord("size") ? ParamKind::Size : ParamKind::Scalar;
          if (p.kind == ParamKind::Size) fn->sizeNames.push_back(p.name);
          p.value = define(in, ref, Type::scalar(p.dtype), nullptr, 0);
          if (in.eat("=")) p.defaultValue = in.number();
        }
        fn->body.args.push_back(p.value);
        fn->params.push_back(std::move(p));
      } while (in.eat(","));
      in.expect(")");
    }
    for (const PendingDims& d : pending) {
      for (const std::string& dim : d.dims) {
        DimRef ref;
        if (std::isdigit(static_cast<unsigned char>(dim[0]))) {
          ref.constant = std::stoll(dim);
        } else {
          for (size_t i = 0; i < fn->sizeNames.size(); ++i)
            if (fn->sizeNames[i] == dim) ref.sizeIndex = static_cast<int>(i);
          if (ref.sizeIndex < 0) in.fail("tensor dimension '" + dim + "' is not a size parameter");
        }
        fn->params[d.param].dims.push_back(ref);
      }
    }
    headerLines();
    body();
    fn_ = nullptr;
    return fn;
  }

  void headerLines() {
    bool sawGrid = false;
    while (next_ < lines_.size()) {
      Line in = line(next_);
      if (in.peek("{")) {
        ++next_;
        in.expect("{");
        if (!in.atEnd()) in.fail("expected the end of the line after '{'");
        if (!sawGrid) in.fail("expected a 'grid (...) warps N' line before the body");
        return;
      }
      ++next_;
      if (in.eatWord("grid")) {
        in.expect("(");
        for (int axis = 0; axis < 3; ++axis) {
          if (axis) in.expect(",");
          fn_->grid[axis] = LaunchParser(in, fn_->sizeNames).expr();
        }
        in.expect(")");
        if (!in.eatWord("warps")) in.fail("expected 'warps'");
        fn_->numWarps = in.integer();
        if (in.eatWord("producer_warps")) fn_->producerWarps = in.integer();
        if (in.eatWord("cluster")) fn_->clusterSize = in.integer();
        sawGrid = true;
      } else if (in.eatWord("const")) {
        std::string name = in.word();
        in.expect("=");
        fn_->constants.emplace_back(name, in.integer());
      } else if (in.eatWord("require")) {
        Requirement r;
        r.condition = LaunchParser(in, fn_->sizeNames).expr();
        if (in.peek("\"")) r.text = in.quoted();
        fn_->requirements.push_back(std::move(r));
      } else {
        in.fail("expected 'grid', 'const', 'require' or '{'");
      }
      if (!in.atEnd()) in.fail("unexpected text");
    }
    in_end();
  }

  [[noreturn]] void in_end() const {
    throw ParseError("line " + std::to_string(lines_.size()) + ": the kernel ends before its closing '}'");
  }

  // ------------------------------------------------------------ body
  struct Open {
    Op* op;
    size_t region;
  };

  Block& currentBlock() {
    if (open_.empty()) return fn_->body;
    return open_.back().op->regions[open_.back().region];
  }

  void body() {
    open_.clear();
    while (next_ < lines_.size()) {
      Line in = line(next_++);
      if (in.atEnd() || in.isComment()) continue;
      if (in.eat("}")) {
        if (in.eatWord("else")) {
          in.expect("{");
          if (open_.empty() || open_.back().op->kind != OpKind::If || open_.back().region != 0)
            in.fail("'else' without an open 'if'");
          open_.back().region = 1;
          continue;
        }
        if (open_.empty()) return;  // the kernel's own '}'
        open_.pop_back();
        continue;
      }
      opLine(in, rangeOfLine(next_ - 1));
    }
    in_end();
  }

  void opLine(Line& in, SourceRange range) {
    std::vector<std::pair<ValueId, std::string>> results;
    if (in.peek("%")) {
      do results.push_back(in.valueRef());
      while (in.eat(","));
      in.expect("=");
    }
    auto op = std::make_unique<Op>();
    op->range = range;
    Op& o = *op;
    if (in.eatWord("for")) return forHeader(in, std::move(op), results);
    if (in.eatWord("if")) return ifHeader(in, std::move(op), results);
    opBody(in, o);
    std::vector<Type> types;
    if (in.eat(":")) {
      do types.push_back(type(in));
      while (in.eat(","));
    }
    if (!in.atEnd()) in.fail("unexpected text after the op");
    if (types.size() != results.size())
      in.fail(std::to_string(results.size()) + " results but " + std::to_string(types.size()) + " result types");
    for (size_t i = 0; i < results.size(); ++i) {
      o.results.push_back(define(in, results[i], types[i], &o, static_cast<uint32_t>(i)));
      fn_->values[o.results.back()].range = range;
    }
    if (o.kind == OpKind::Const && !types.empty()) ConstAttrs(o.attrs).dtype(types[0].dtype);
    if (o.kind == OpKind::Cast && !types.empty()) CastAttrs(o.attrs).to(types[0].dtype);
    currentBlock().ops.push_back(std::move(op));
  }

  void resultTypesInArrow(Line& in, std::vector<Type>& types) {
    if (!in.eat("->")) return;
    in.expect("(");
    if (!in.eat(")")) {
      do types.push_back(type(in));
      while (in.eat(","));
      in.expect(")");
    }
  }

  void finishHeader(Line& in, std::unique_ptr<Op> op, const std::vector<std::pair<ValueId, std::string>>& results,
                    const std::vector<Type>& types) {
    in.expect("{");
    if (!in.atEnd()) in.fail("expected the end of the line after '{'");
    if (types.size() != results.size())
      in.fail(std::to_string(results.size()) + " results but " + std::to_string(types.size()) + " result types");
    for (size_t i = 0; i < results.size(); ++i) {
      op->results.push_back(define(in, results[i], types[i], op.get(), static_cast<uint32_t>(i)));
      fn_->values[op->results.back()].range = op->range;
    }
    if (open_.size() >= static_cast<size_t>(kMaxDepth)) in.fail("regions nested too deeply");
    Op* raw = op.get();
    currentBlock().ops.push_back(std::move(op));
    open_.push_back(Open{raw, 0});
  }

  void forHeader(Line& in, std::unique_ptr<Op> op, const std::vector<std::pair<ValueId, std::string>>& results) {
    op->kind = OpKind::For;
    op->regions.resize(1);
    auto iv = in.valueRef();
    in.expect("=");
    op->operands.push_back(use(in));
    if (!in.eatWord("to")) in.fail("expected 'to'");
    op->operands.push_back(use(in));
    if (!in.eatWord("step")) in.fail("expected 'step'");
    op->operands.push_back(use(in));
    if (in.eatWord("stages")) ForAttrs(op->attrs).stages(in.integer());
    if (in.eatWord("specialize")) ForAttrs(op->attrs).specialize(true);
    std::vector<std::pair<ValueId, std::string>> iterArgs;
    if (in.eatWord("iter_args")) {
      in.expect("(");
      do {
        iterArgs.push_back(in.valueRef());
        in.expect("=");
        op->operands.push_back(use(in));
      } while (in.eat(","));
      in.expect(")");
    }
    std::vector<Type> types;
    resultTypesInArrow(in, types);
    Block& region = op->regions[0];
    region.args.push_back(define(in, iv, fn_->typeOf(ForOp(*op).lowerBound()), nullptr, 0));
    for (size_t i = 0; i < iterArgs.size(); ++i)
      region.args.push_back(define(in, iterArgs[i], fn_->typeOf(op->operands[3 + i]), nullptr, 0));
    finishHeader(in, std::move(op), results, types);
  }

  void ifHeader(Line& in, std::unique_ptr<Op> op, const std::vector<std::pair<ValueId, std::string>>& results) {
    op->kind = OpKind::If;
    op->regions.resize(2);
    op->operands.push_back(use(in));
    if (in.eatWord("producer")) IfAttrs(op->attrs).producer(true);
    std::vector<Type> types;
    resultTypesInArrow(in, types);
    finishHeader(in, std::move(op), results, types);
  }

  template <typename Kind, size_t N>
  static std::optional<Kind> kindNamed(const std::string& w, const char* (*nameOf)(Kind), const Kind (&all)[N]) {
    for (Kind k : all)
      if (w == nameOf(k)) return k;
    return std::nullopt;
  }

  void opBody(Line& in, Op& o) {
    static const BinaryKind kBinary[] = {BinaryKind::Add, BinaryKind::Sub, BinaryKind::Mul, BinaryKind::Div,
                                         BinaryKind::Rem, BinaryKind::Min, BinaryKind::Max, BinaryKind::Pow,
                                         BinaryKind::And, BinaryKind::Or,  BinaryKind::Xor, BinaryKind::Shl,
                                         BinaryKind::Shr};
    static const UnaryKind kUnary[] = {UnaryKind::Neg,  UnaryKind::Not,  UnaryKind::Abs,   UnaryKind::Exp,
                                       UnaryKind::Exp2, UnaryKind::Log,  UnaryKind::Log2,  UnaryKind::Sqrt,
                                       UnaryKind::Rsqrt, UnaryKind::Tanh, UnaryKind::Erf,  UnaryKind::Sin,
                                       UnaryKind::Cos,  UnaryKind::Floor, UnaryKind::Ceil};
    static const CmpKind kCmp[] = {CmpKind::Eq, CmpKind::Ne, CmpKind::Lt, CmpKind::Le, CmpKind::Gt, CmpKind::Ge};
    static const ReduceKind kReduce[] = {ReduceKind::Sum, ReduceKind::Max, ReduceKind::Min, ReduceKind::Prod};
    const std::string w = in.word();
    auto reduceKind = [&] {
      std::string r = in.word();
      std::optional<ReduceKind> k = kindNamed(r, reduceKindName, kReduce);
      if (!k) in.failWord("unknown reduction '" + r + "'");
      return *k;
    };
    if (w == "const") {
      o.kind = OpKind::Const;
      ConstAttrs constant(o.attrs);
      if (in.eatWord("true")) constant.intValue(1);
      else if (in.eatWord("false")) constant.intValue(0);
      else {
        // Integers print as digits (and a sign); floats with '.', an exponent, inf or nan.
        std::string_view t = in.token();
        const bool isInt = !t.empty() && t.find_first_not_of("-0123456789") == std::string_view::npos;
        if (isInt) constant.intValue(in.integer());
        else constant.floatValue(in.number());
      }
      return;
    }
    if (w == "program_id" || w == "num_programs" || w == "iota") {
      o.kind = w == "program_id" ? OpKind::ProgramId : w == "num_programs" ? OpKind::NumPrograms : OpKind::Iota;
      const int64_t axis = in.integer();
      if (o.kind == OpKind::ProgramId) ProgramIdAttrs(o.attrs).axis(axis);
      else if (o.kind == OpKind::NumPrograms) NumProgramsAttrs(o.attrs).axis(axis);
      else IotaAttrs(o.attrs).axis(axis);
      return;
    }
    if (w == "cmp") {
      std::string c = in.word();
      std::optional<CmpKind> k = kindNamed(c, cmpKindName, kCmp);
      if (!k) in.failWord("unknown comparison '" + c + "'");
      o.kind = OpKind::Compare;
      CompareAttrs(o.attrs).cmpKind(*k);
      o.operands = uses(in);
      return;
    }
    if (w == "reduce") {
      o.kind = OpKind::Reduce;
      ReduceAttrs(o.attrs).reduceKind(reduceKind());
      o.operands.push_back(use(in));
      in.expect(",");
      if (!in.eatWord("axis")) in.fail("expected 'axis'");
      ReduceAttrs(o.attrs).axis(in.integer());
      return;
    }
    if (w == "reduce_all") {
      o.kind = OpKind::ReduceAll;
      ReduceAllAttrs(o.attrs).reduceKind(reduceKind());
      o.operands.push_back(use(in));
      return;
    }
    if (std::optional<BinaryKind> k = kindNamed(w, binaryKindName, kBinary)) {
      o.kind = OpKind::Binary;
      BinaryAttrs(o.attrs).binaryKind(*k);
      o.operands = uses(in);
      return;
    }
    if (std::optional<UnaryKind> k = kindNamed(w, unaryKindName, kUnary)) {
      o.kind = OpKind::Unary;
      UnaryAttrs(o.attrs).unaryKind(*k);
      o.operands = uses(in);
      return;
    }
    std::optional<OpKind> kind;
    for (size_t i = 0; i < kNumOpKinds; ++i)
      if (w == opKindName(static_cast<OpKind>(i))) kind = static_cast<OpKind>(i);
    if (!kind) in.failWord("unknown op '" + w + "'");
    o.kind = *kind;
    switch (o.kind) {
      case OpKind::Barrier:
        if (in.eatWord("after_mbarrier_init")) BarrierAttrs(o.attrs).afterMbarrierInit(true);
        return;
      case OpKind::WaitGroup: WaitGroupAttrs(o.attrs).pending(in.integer()); return;
      case OpKind::View:
        o.operands.push_back(use(in));
        in.expect("[");
        if (!in.peek("]")) {
          std::vector<ValueId> offsets = uses(in);
          o.operands.insert(o.operands.end(), offsets.begin(), offsets.end());
        }
        in.expect("]");
        return;
      case OpKind::Load:
        o.operands.push_back(use(in));
        if (in.eat(",")) {
          if (!in.eatWord("other")) in.fail("expected 'other'");
          o.operands.push_back(use(in));
        }
        return;
      case OpKind::TagSet:
        TagSetAttrs(o.attrs).tagName(in.word());
        o.operands = uses(in);
        return;
      case OpKind::Assert: return assertBody(in, o);
      default: break;
    }
    o.operands = uses(in);
    // Trailing keyword attributes, after the operands' comma.
    while (!in.atEnd() && !in.peek(":")) {
      std::string key = in.word();
      if (o.kind == OpKind::MbarrierInit && key == "count") MbarrierInitAttrs(o.attrs).arrivals(in.integer());
      else if (o.kind == OpKind::MbarrierExpectTx && key == "bytes") MbarrierExpectTxAttrs(o.attrs).bytes(in.integer());
      else if (o.kind == OpKind::MbarrierInit && key == "cluster_release") MbarrierInitAttrs(o.attrs).clusterRelease(true);
      else if (o.kind == OpKind::MbarrierArrive && key == "cluster_release")
        MbarrierArriveAttrs(o.attrs).clusterRelease(true);
      else if (o.kind == OpKind::CopyBulk && key == "multicast") CopyBulkAttrs(o.attrs).multicast(true);
      else if (o.kind == OpKind::Dot && key == "trans_b") DotAttrs(o.attrs).transB(true);
      else if (o.kind == OpKind::Dot && key == "wgmma_in_flight") DotAttrs(o.attrs).wgmmaInFlight(true);
      else in.failWord("unknown attribute '" + key + "' of " + w);
      in.eat(",");
    }
  }

  // `assert [%a, %kt] ((%a.origin[1] div 16) eq %kt)  "message"`: the condition back to
  // postfix (ir.h, AssertCode), tag names in order of first use.
  void assertBody(Line& in, Op& o) {
    in.expect("[");
    if (!in.peek("]")) o.operands = uses(in);
    in.expect("]");
    AssertCondition parsed;
    condition(in, o, parsed, 0);
    if (in.peek("\"")) parsed.names[0] = in.quoted();
    AssertAttrs(o.attrs).code(parsed.code).names(parsed.names);
  }

  // An Assert's condition as it is parsed: its postfix code and the names it refers to.
  struct AssertCondition {
    std::vector<int64_t> code;
    std::vector<std::string> names{""};  // [message, tag names in order of first use]
  };

  void condition(Line& in, Op& o, AssertCondition& parsed, int depth) {
    if (depth > kMaxDepth) in.fail("condition nested too deeply");
    std::vector<int64_t>& code = parsed.code;
    std::vector<std::string>& names = parsed.names;
    auto operandIndex = [&](ValueId v) {
      for (size_t k = 0; k < o.operands.size(); ++k)
        if (o.operands[k] == v) return static_cast<int64_t>(k);
      in.fail("the condition reads %" + std::to_string(v) + ", which is not in the assertion's operand list");
    };
    if (in.eatWord("not")) {
      condition(in, o, parsed, depth + 1);
      code.push_back(static_cast<int64_t>(AssertCode::Not));
      return;
    }
    if (in.eat("(")) {
      condition(in, o, parsed, depth + 1);
      std::string opName = in.word();
      static const BinaryKind kArith[] = {BinaryKind::Add, BinaryKind::Sub, BinaryKind::Mul, BinaryKind::Div,
                                          BinaryKind::Rem};
      static const CmpKind kCmp[] = {CmpKind::Eq, CmpKind::Ne, CmpKind::Lt, CmpKind::Le, CmpKind::Gt, CmpKind::Ge};
      condition(in, o, parsed, depth + 1);
      in.expect(")");
      if (opName == "and") code.push_back(static_cast<int64_t>(AssertCode::And));
      else if (opName == "or") code.push_back(static_cast<int64_t>(AssertCode::Or));
      else if (auto b = kindNamed(opName, binaryKindName, kArith))
        code.insert(code.end(), {static_cast<int64_t>(AssertCode::Binary), static_cast<int64_t>(*b)});
      else if (auto c = kindNamed(opName, cmpKindName, kCmp))
        code.insert(code.end(), {static_cast<int64_t>(AssertCode::Compare), static_cast<int64_t>(*c)});
      else in.failWord("unknown operator '" + opName + "' in a condition");
      return;
    }
    if (in.peek("%")) {
      std::string tag;
      ValueId v = use(in, &tag);
      if (tag.empty()) {
        code.insert(code.end(), {static_cast<int64_t>(AssertCode::Scalar), operandIndex(v)});
        return;
      }
      int64_t coordinate = -1;
      if (in.eat("[")) {
        coordinate = in.integer();
        in.expect("]");
      }
      int64_t n = -1;
      for (size_t i = 1; i < names.size(); ++i)
        if (names[i] == tag) n = static_cast<int64_t>(i);
      if (n < 0) {
        names.push_back(tag);
        n = static_cast<int64_t>(names.size() - 1);
      }
      code.insert(code.end(), {static_cast<int64_t>(AssertCode::Tag), operandIndex(v), n, coordinate});
      return;
    }
    if (in.at() == '-' && !in.atDigit(1)) {
      in.expect("-");
      condition(in, o, parsed, depth + 1);
      code.push_back(static_cast<int64_t>(AssertCode::Neg));
      return;
    }
    code.insert(code.end(), {static_cast<int64_t>(AssertCode::Const), in.integer()});
  }

  std::string_view text_;
  std::vector<std::string_view> lines_;
  size_t next_ = 0;
  Function* fn_ = nullptr;
  std::vector<bool> defined_;
  std::vector<Open> open_;
};

}  // namespace

IrParseResult parseIr(std::string_view text) {
  IrParseResult result;
  try {
    result.module = Parser(text).run();
  } catch (const ParseError& e) {
    result.error = e.what();
    result.module.reset();
    return result;
  }
  for (const auto& fn : result.module->functions) {
    std::vector<std::string> problems = verify(*fn);
    if (!problems.empty()) {
      result.error = "kernel @" + fn->name + " is not valid IR: " + problems.front();
      result.module.reset();
      return result;
    }
  }
  return result;
}

LayoutParseResult parseLayoutText(std::string_view text) {
  LayoutParseResult result;
  try {
    Line in(text, 1);
    result.layout = layout(in);
    if (in.at() != '\0') in.fail("unexpected text after the layout");
    result.ok = true;
  } catch (const ParseError& e) {
    std::string message = e.what();
    const std::string linePrefix = "line 1, ";
    result.error = message.rfind(linePrefix, 0) == 0 ? message.substr(linePrefix.size()) : message;
  }
  return result;
}

}  // namespace argus::ir

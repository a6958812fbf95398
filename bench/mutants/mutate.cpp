#include "bench/mutants/mutate.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <set>
#include <string_view>

#include "frontend/lexer.h"
#include "support/diagnostic.h"
#include "support/source.h"

namespace argus::mutants {
namespace {

// One replacement of a byte range of the source.
struct Edit {
  uint32_t begin, end;
  std::string text;
};

// Statements that order data movement: the ones a mistake drops or misplaces.
const std::set<std::string_view> kSyncStatements = {"barrier", "commit_group", "wait_group", "copy_async",
                                                    "copy_bulk", "copy"};
const std::set<std::string_view> kLoopHeads = {"range", "pipelined", "unroll"};
const std::set<std::string_view> kDotCalls = {"dot", "mma", "wgmma"};

bool isOpen(const TokenInfo& t) { return t.kind == "'('" || t.kind == "'['" || t.kind == "'{'"; }
bool isClose(const TokenInfo& t) { return t.kind == "')'" || t.kind == "']'" || t.kind == "'}'"; }

// A logical line of the token stream: a simple statement or a compound statement's header.
struct Statement {
  size_t first = 0, last = 0;  // token indices, inclusive, NEWLINE excluded
  int depth = 0;               // indentation depth
  bool header = false;         // ends with ':' (for, if, def, ...)
};

class Mutator {
 public:
  Mutator(const std::string& fileName, const std::string& source) : file_(fileName, source) {
    DiagnosticSink ignored;
    tokens_ = tokenize(file_, ignored);
    matchBrackets();
    splitStatements();
    markBodies();
  }

  std::vector<Mutant> run() {
    intOffByOne();
    programIdSwap();
    dropSync();
    moveSync();
    swapDotOperands();
    dropSwizzle();
    transposeSubscript();
    loopBound();
    loopVariableOffByOne();
    loopVariableSwap();
    cdivRoundsDown();
    return std::move(out_);
  }

 private:
  SourceFile file_;
  std::vector<TokenInfo> tokens_;
  std::vector<size_t> partner_;       // matching bracket, or npos
  std::vector<bool> inBody_;          // token lies in a function body (not a signature or decorator)
  std::vector<Statement> statements_;
  std::vector<size_t> statementOf_;   // token -> statement index (npos outside)
  std::vector<Mutant> out_;
  std::set<std::string> seen_;

  static constexpr size_t npos = static_cast<size_t>(-1);

  const std::string& kind(size_t i) const { return tokens_[i].kind; }
  const std::string& text(size_t i) const { return tokens_[i].text; }
  bool isName(size_t i, std::string_view name) const { return kind(i) == "NAME" && text(i) == name; }
  std::string_view slice(uint32_t b, uint32_t e) const { return std::string_view(file_.text()).substr(b, e - b); }

  void matchBrackets() {
    partner_.assign(tokens_.size(), npos);
    std::vector<size_t> open;
    for (size_t i = 0; i < tokens_.size(); ++i) {
      if (isOpen(tokens_[i])) open.push_back(i);
      if (isClose(tokens_[i]) && !open.empty()) {
        partner_[i] = open.back();
        partner_[open.back()] = i;
        open.pop_back();
      }
    }
  }

  void splitStatements() {
    statementOf_.assign(tokens_.size(), npos);
    int depth = 0;
    size_t start = npos;
    for (size_t i = 0; i < tokens_.size(); ++i) {
      const std::string& k = kind(i);
      if (k == "INDENT") { ++depth; continue; }
      if (k == "DEDENT") { --depth; continue; }
      if (k == "NEWLINE" || k == "EOF") {
        if (start != npos) {
          Statement s{start, i - 1, depth, kind(i - 1) == "':'"};
          for (size_t t = start; t < i; ++t) statementOf_[t] = statements_.size();
          statements_.push_back(s);
        }
        start = npos;
        continue;
      }
      if (start == npos) start = i;
    }
  }

  // Function bodies: everything after a `def ...:` header up to the dedent back to its depth.
  void markBodies() {
    inBody_.assign(tokens_.size(), false);
    for (size_t s = 0; s < statements_.size(); ++s) {
      if (!isName(statements_[s].first, "def") && kind(statements_[s].first) != "'def'") continue;
      int depth = statements_[s].depth;
      for (size_t b = s + 1; b < statements_.size() && statements_[b].depth > depth; ++b)
        for (size_t t = statements_[b].first; t <= statements_[b].last; ++t) inBody_[t] = true;
    }
  }

  unsigned lineOf(uint32_t offset) const { return file_.lineCol(offset).line; }

  void emit(const std::string& op, const std::string& description, std::vector<Edit> edits) {
    std::sort(edits.begin(), edits.end(), [](const Edit& a, const Edit& b) { return a.begin < b.begin; });
    std::string result;
    uint32_t at = 0;
    for (const Edit& e : edits) {
      if (e.begin < at) return;  // overlapping edits: not a mutant
      result += slice(at, e.begin);
      result += e.text;
      at = e.end;
    }
    result += slice(at, static_cast<uint32_t>(file_.text().size()));
    if (result == file_.text() || !seen_.insert(result).second) return;
    out_.push_back({op, description, lineOf(edits.front().begin), std::move(result)});
  }

  std::string tokenText(size_t first, size_t last) const {
    return std::string(slice(tokens_[first].range.begin, tokens_[last].range.end));
  }

  // Top-level comma-separated pieces of the bracket at `open`: [first, last] token indices.
  std::vector<std::pair<size_t, size_t>> pieces(size_t open) const {
    std::vector<std::pair<size_t, size_t>> out;
    size_t close = partner_[open];
    if (close == npos || close == open + 1) return out;
    size_t start = open + 1;
    for (size_t i = open + 1; i < close; ++i) {
      if (isOpen(tokens_[i]) && partner_[i] != npos) { i = partner_[i]; continue; }
      if (kind(i) == "','") { out.push_back({start, i - 1}); start = i + 1; }
    }
    if (start < close) out.push_back({start, close - 1});
    return out;
  }

  // ---- operators

  // An integer that places data or orders it: inside a subscript, the axis of
  // program_id, the count of wait_group, or a stage modulus. Arithmetic
  // constants and reduction axes change what is computed, not the choreography,
  // and are left alone (no checker can know the intended formula).
  bool isChoreographyInt(size_t i) const {
    if (i > 0 && kind(i - 1) == "'%'") return true;
    for (size_t j = i; j-- > 0;) {
      if (isClose(tokens_[j]) && partner_[j] != npos) { j = partner_[j]; continue; }
      if (!isOpen(tokens_[j])) continue;
      if (kind(j) == "'['") return true;
      return kind(j) == "'('" && j > 0 && (isName(j - 1, "wait_group") || isName(j - 1, "program_id"));
    }
    return false;
  }

  void intOffByOne() {
    for (size_t i = 0; i < tokens_.size(); ++i) {
      if (!inBody_[i] || kind(i) != "INT" || !isChoreographyInt(i)) continue;
      int64_t v = 0;
      try { v = std::stoll(text(i)); } catch (...) { continue; }
      const TokenInfo& t = tokens_[i];
      for (int64_t delta : {int64_t{1}, int64_t{-1}}) {
        if (v + delta < 0) continue;
        emit("int-off-by-one", text(i) + " -> " + std::to_string(v + delta),
             {{t.range.begin, t.range.end, std::to_string(v + delta)}});
      }
    }
  }

  // Every program_id(0) and program_id(1) of a function exchanged: a transposed grid.
  void programIdSwap() {
    std::vector<Edit> edits;
    for (size_t i = 0; i + 3 < tokens_.size(); ++i) {
      if (!inBody_[i] || !isName(i, "program_id") || kind(i + 1) != "'('" || kind(i + 2) != "INT" ||
          kind(i + 3) != "')'")
        continue;
      if (text(i + 2) == "0") edits.push_back({tokens_[i + 2].range.begin, tokens_[i + 2].range.end, "1"});
      if (text(i + 2) == "1") edits.push_back({tokens_[i + 2].range.begin, tokens_[i + 2].range.end, "0"});
    }
    if (!edits.empty()) emit("program-id-swap", "program_id(0) <-> program_id(1) everywhere", edits);
  }

  // A bare call of a synchronization or copy builtin as a whole statement.
  bool isSyncStatement(const Statement& s) const {
    return inBody_[s.first] && kind(s.first) == "NAME" && kSyncStatements.count(text(s.first)) &&
           s.first + 1 <= s.last && kind(s.first + 1) == "'('" && partner_[s.first + 1] == s.last;
  }

  void dropSync() {
    for (const Statement& s : statements_) {
      if (!isSyncStatement(s)) continue;
      emit("drop-sync", "dropped " + tokenText(s.first, s.last),
           {{tokens_[s.first].range.begin, tokens_[s.last].range.end, "pass"}});
    }
  }

  // A sync statement exchanged with the simple statement just before or after it in the same block.
  void moveSync() {
    for (size_t k = 0; k < statements_.size(); ++k) {
      const Statement& s = statements_[k];
      if (!isSyncStatement(s)) continue;
      for (size_t other : {k - 1, k + 1}) {
        if (other >= statements_.size()) continue;
        const Statement& o = statements_[other];
        if (o.depth != s.depth || o.header || !inBody_[o.first]) continue;
        // Only neighbours in the same block: no INDENT/DEDENT between the two.
        size_t lo = std::min(s.last, o.last), hi = std::max(s.first, o.first);
        bool sameBlock = true;
        for (size_t t = lo; t < hi; ++t)
          if (kind(t) == "INDENT" || kind(t) == "DEDENT") sameBlock = false;
        if (!sameBlock) continue;
        std::string a = tokenText(s.first, s.last), b = tokenText(o.first, o.last);
        emit("move-sync", "moved " + a + (other < k ? " up" : " down") + " past " + b,
             {{tokens_[s.first].range.begin, tokens_[s.last].range.end, b},
              {tokens_[o.first].range.begin, tokens_[o.last].range.end, a}});
      }
    }
  }

  void swapDotOperands() {
    for (size_t i = 0; i + 1 < tokens_.size(); ++i) {
      if (!inBody_[i] || kind(i) != "NAME" || !kDotCalls.count(text(i)) || kind(i + 1) != "'('") continue;
      if (i > 0 && kind(i - 1) == "'.'" && text(i) != "mma") continue;  // a method of something else
      auto args = pieces(i + 1);
      if (args.size() < 2) continue;
      std::string a = tokenText(args[0].first, args[0].second), b = tokenText(args[1].first, args[1].second);
      emit("swap-dot-operands", text(i) + "(" + a + ", " + b + ", ...) -> " + text(i) + "(" + b + ", " + a + ", ...)",
           {{tokens_[args[0].first].range.begin, tokens_[args[0].second].range.end, b},
            {tokens_[args[1].first].range.begin, tokens_[args[1].second].range.end, a}});
    }
  }

  // `swizzle=...` removed from one buffer: the swizzle on one side only.
  void dropSwizzle() {
    for (size_t i = 0; i + 1 < tokens_.size(); ++i) {
      if (!inBody_[i] || !isName(i, "swizzle") || kind(i + 1) != "'='" || i == 0 || kind(i - 1) != "','") continue;
      // The argument runs to the next top-level ',' or the call's ')'.
      size_t j = i + 2;
      while (j < tokens_.size() && kind(j) != "','" && !isClose(tokens_[j])) {
        if (isOpen(tokens_[j]) && partner_[j] != npos) j = partner_[j];
        ++j;
      }
      emit("drop-swizzle", "dropped " + tokenText(i, j - 1),
           {{tokens_[i - 1].range.begin, tokens_[j - 1].range.end, ""}});
    }
  }

  // `view.tile(...)[i, j]` -> `[j, i]`: tile coordinates transposed.
  void transposeSubscript() {
    for (size_t i = 1; i < tokens_.size(); ++i) {
      if (!inBody_[i] || kind(i) != "'['" || kind(i - 1) != "')'") continue;
      auto items = pieces(i);
      if (items.size() != 2) continue;
      std::string a = tokenText(items[0].first, items[0].second), b = tokenText(items[1].first, items[1].second);
      if (a == b) continue;
      emit("transpose-subscript", "[" + a + ", " + b + "] -> [" + b + ", " + a + "]",
           {{tokens_[items[0].first].range.begin, tokens_[items[0].second].range.end, b},
            {tokens_[items[1].first].range.begin, tokens_[items[1].second].range.end, a}});
    }
  }

  void loopBound() {
    for (size_t i = 0; i + 1 < tokens_.size(); ++i) {
      if (!inBody_[i] || kind(i) != "NAME" || !kLoopHeads.count(text(i)) || kind(i + 1) != "'('") continue;
      auto args = pieces(i + 1);
      if (args.empty()) continue;
      // range(stop) or range(start, stop[, step]): the stop; pipelined/unroll: the count.
      auto bound = (text(i) == "range" && args.size() >= 2) ? args[1] : args[0];
      if (tokens_[bound.first].kind == "NAME" && bound.first + 1 < tokens_.size() &&
          kind(bound.first + 1) == "'='")
        continue;  // a keyword argument
      std::string e = tokenText(bound.first, bound.second);
      for (const char* delta : {" - 1", " + 1"})
        emit("loop-bound", text(i) + "(" + e + ") -> " + text(i) + "((" + e + ")" + delta + ")",
             {{tokens_[bound.first].range.begin, tokens_[bound.second].range.end, "(" + e + ")" + delta}});
    }
  }

  // `cdiv(a, b)` -> `(a) // (b)`: a tile count (a loop's trips, the grid's
  // blocks) that rounds down, one tile short whenever b does not divide a.
  void cdivRoundsDown() {
    for (size_t i = 0; i + 1 < tokens_.size(); ++i) {
      if (!inBody_[i] || !isName(i, "cdiv") || kind(i + 1) != "'('" || partner_[i + 1] == npos) continue;
      auto args = pieces(i + 1);
      if (args.size() != 2) continue;
      std::string a = tokenText(args[0].first, args[0].second), b = tokenText(args[1].first, args[1].second);
      emit("cdiv-rounds-down", "cdiv(" + a + ", " + b + ") -> (" + a + ") // (" + b + ")",
           {{tokens_[i].range.begin, tokens_[partner_[i + 1]].range.end, "(" + a + ") // (" + b + ")"}});
    }
  }

  // Loop variables in scope at each token: `for v in ...:` headers enclosing it.
  struct LoopVar {
    std::string name;
    size_t header;  // statement index
  };
  std::vector<LoopVar> loopVars() const {
    std::vector<LoopVar> out;
    for (size_t s = 0; s < statements_.size(); ++s) {
      const Statement& st = statements_[s];
      if (!inBody_[st.first] || st.first + 2 > st.last) continue;
      if ((kind(st.first) == "'for'" || isName(st.first, "for")) && kind(st.first + 1) == "NAME")
        out.push_back({text(st.first + 1), s});
    }
    return out;
  }
  // Statement `s` is inside the body of the loop whose header is statement `header`.
  bool encloses(size_t header, size_t s) const {
    if (s <= header) return false;
    int depth = statements_[header].depth;
    for (size_t k = header + 1; k <= s; ++k)
      if (statements_[k].depth <= depth) return false;
    return true;
  }
  // A use of a loop variable inside a bracket (an index, a call argument), not its definition.
  std::vector<std::pair<size_t, const LoopVar*>> loopVariableUses(const std::vector<LoopVar>& vars) const {
    std::vector<std::pair<size_t, const LoopVar*>> out;
    std::vector<int> bracketDepth(tokens_.size(), 0);
    int depth = 0;
    for (size_t i = 0; i < tokens_.size(); ++i) {
      if (isOpen(tokens_[i])) ++depth;
      if (isClose(tokens_[i])) --depth;
      bracketDepth[i] = depth;
    }
    for (size_t i = 0; i < tokens_.size(); ++i) {
      if (!inBody_[i] || kind(i) != "NAME" || statementOf_[i] == npos) continue;
      if (i > 0 && (kind(i - 1) == "'.'" || kind(i - 1) == "'for'" || isName(i - 1, "for"))) continue;
      size_t s = statementOf_[i];
      bool inExpression = bracketDepth[i] > 0 || (kind(statements_[s].first) == "NAME" && statements_[s].first + 1 < i &&
                                                   kind(statements_[s].first + 1) == "'='");
      if (!inExpression) continue;
      for (const LoopVar& v : vars)
        if (v.name == text(i) && encloses(v.header, s)) out.push_back({i, &v});
    }
    return out;
  }

  void loopVariableOffByOne() {
    auto vars = loopVars();
    for (auto [i, var] : loopVariableUses(vars)) {
      emit("loop-variable-off-by-one", text(i) + " -> (" + text(i) + " + 1)",
           {{tokens_[i].range.begin, tokens_[i].range.end, "(" + text(i) + " + 1)"}});
    }
  }

  // One use of a loop variable replaced by another loop variable in scope (kt <-> kk).
  void loopVariableSwap() {
    auto vars = loopVars();
    for (auto [i, var] : loopVariableUses(vars)) {
      for (const LoopVar& other : vars) {
        if (other.name == var->name || !encloses(other.header, statementOf_[i])) continue;
        emit("loop-variable-swap", text(i) + " -> " + other.name,
             {{tokens_[i].range.begin, tokens_[i].range.end, other.name}});
      }
    }
  }
};

}  // namespace

const std::vector<std::string>& operatorNames() {
  static const std::vector<std::string> names = {
      "int-off-by-one", "program-id-swap", "drop-sync", "move-sync", "swap-dot-operands", "drop-swizzle",
      "transpose-subscript", "loop-bound", "loop-variable-off-by-one", "loop-variable-swap", "cdiv-rounds-down"};
  return names;
}

std::vector<Mutant> mutantsOf(const std::string& fileName, const std::string& source) {
  return Mutator(fileName, source).run();
}

}  // namespace argus::mutants

// The shape of a file: workspace symbols (kernels and device functions of every
// open document), folding ranges and selection ranges. All work on whatever
// the parser recovered, so a file with errors still folds and selects.
#include <algorithm>
#include <cctype>

#include "frontend/parser.h"
#include "lsp/features_extra.h"
#include "lsp/syntax_walk.h"

namespace argus::lsp {

namespace {



// clangd's rule, simplified: the query's characters appear in order in the
// name, ignoring case; an empty query matches everything.
bool fuzzyMatches(std::string_view query, std::string_view name) {
  size_t at = 0;
  for (char c : name) {
    if (at == query.size()) break;
    if (std::tolower(static_cast<unsigned char>(c)) == std::tolower(static_cast<unsigned char>(query[at]))) ++at;
  }
  return at == query.size();
}

bool contains(SourceRange range, uint32_t offset) { return range.begin <= offset && offset <= range.end; }

}  // namespace

json workspaceSymbols(const std::vector<std::pair<std::string, std::string>>& documents, const std::string& query) {
  json list = json::array();
  for (const auto& [uri, text] : documents) {
    SourceFile file(uri, text);
    DiagnosticSink ignored;  // syntax errors are the document's diagnostics, not ours
    std::unique_ptr<ast::Module> module = parseModule(file, ignored);
    for (const auto& fn : module->functions) {
      if (!fn || fn->name.empty() || !fuzzyMatches(query, fn->name)) continue;
      list.push_back({{"name", fn->name},
                      {"kind", kSymbolFunction},
                      {"containerName", decoratorDetail(*fn)},
                      {"location", toJson(Location{uri, rangeOf(file, fn->nameRange)})}});
    }
  }
  return list;
}

json foldingRanges(const Snapshot& snapshot) {
  json list = json::array();
  const SourceFile& file = snapshot.file();
  auto fold = [&](uint32_t beginOffset, uint32_t endOffset, const char* kind) {
    uint32_t first = positionOf(file, beginOffset).line;
    uint32_t last = positionOf(file, endOffset).line;
    if (last <= first) return;
    json range = {{"startLine", first}, {"endLine", last}};
    if (kind) range["kind"] = kind;
    list.push_back(std::move(range));
  };
  auto lastEnd = [](const ast::Block& block, uint32_t fallback) {
    for (auto it = block.rbegin(); it != block.rend(); ++it)
      if (*it) return (*it)->range.end;
    return fallback;
  };
  if (snapshot.ast) {
    for (const auto& fn : snapshot.ast->functions)
      if (fn) fold(fn->nameRange.empty() ? fn->range.begin : fn->nameRange.begin, lastEnd(fn->body, fn->range.end), nullptr);
    for (const StatementVisit& visit : allStatements(*snapshot.ast)) {
      const ast::Stmt& s = *visit.stmt;
      std::vector<const ast::Block*> blocks = childBlocks(s);
      if (blocks.empty()) continue;
      // `if` folds to the end of its own branch; an `else:` branch folds on its own.
      fold(s.range.begin, lastEnd(*blocks[0], s.range.end), nullptr);
      if (blocks.size() == 2 && !blocks[1]->empty() && (*blocks[1])[0] &&
          !((*blocks[1])[0]->kind == ast::StmtKind::If && static_cast<const ast::IfStmt&>(*(*blocks[1])[0]).isElif)) {
        uint32_t elseLine = positionOf(file, (*blocks[1])[0]->range.begin).line;
        // The `else` keyword's line: the last one before the branch's first statement that says so.
        for (const TokenInfo& token : snapshot.tokens)
          if (token.kind == "'else'" && token.range.begin > lastEnd(*blocks[0], s.range.begin) &&
              token.range.begin < (*blocks[1])[0]->range.begin)
            elseLine = positionOf(file, token.range.begin).line;
        uint32_t last = positionOf(file, lastEnd(*blocks[1], s.range.end)).line;
        if (last > elseLine) list.push_back({{"startLine", elseLine}, {"endLine", last}});
      }
    }
  }
  // Runs of two or more whole-line comments.
  const std::string& text = file.text();
  int64_t runStart = -1;  // the first line of the current run of comments, -1 outside one
  uint32_t runEnd = 0, line = 0;
  for (size_t begin = 0; begin <= text.size(); ++line) {
    size_t end = text.find('\n', begin);
    if (end == std::string::npos) end = text.size();
    size_t first = text.find_first_not_of(" \t\r", begin);
    bool comment = first != std::string::npos && first < end && text[first] == '#';
    if (comment) {
      if (runStart < 0) runStart = line;
      runEnd = line;
    } else if (runStart >= 0) {
      if (runEnd > runStart) list.push_back({{"startLine", runStart}, {"endLine", runEnd}, {"kind", "comment"}});
      runStart = -1;
    }
    begin = end + 1;
  }
  if (runStart >= 0 && runEnd > runStart) list.push_back({{"startLine", runStart}, {"endLine", runEnd}, {"kind", "comment"}});
  return list;
}

json selectionRanges(const Snapshot& snapshot, const std::vector<Position>& positions) {
  json result = json::array();
  const SourceFile& file = snapshot.file();
  std::vector<StatementVisit> statements;
  if (snapshot.ast) statements = allStatements(*snapshot.ast);
  for (Position position : positions) {
    uint32_t offset = offsetOf(file, position);
    // Every range that contains the cursor; sorted outermost first they nest.
    std::vector<SourceRange> ranges{SourceRange{0, static_cast<uint32_t>(file.text().size())}};
    if (snapshot.ast)
      for (const auto& fn : snapshot.ast->functions)
        if (fn && contains(fn->range, offset)) ranges.push_back(fn->range);
    for (const StatementVisit& visit : statements)
      if (contains(visit.stmt->range, offset)) ranges.push_back(visit.stmt->range);
    for (const ast::Expr* e : snapshot.expressions) {
      if (e->range.begin > offset) break;
      if (contains(e->range, offset) && !e->range.empty()) ranges.push_back(e->range);
    }
    std::stable_sort(ranges.begin(), ranges.end(), [](SourceRange a, SourceRange b) {
      return a.end - a.begin > b.end - b.begin;
    });
    // A pathological expression nests thousands deep; the editor only needs the
    // innermost steps (and the reply must not nest without bound).
    constexpr size_t kMaxSteps = 128;
    if (ranges.size() > kMaxSteps) ranges.erase(ranges.begin() + 1, ranges.end() - (kMaxSteps - 1));
    json node;  // innermost last: build from the outside in
    SourceRange previous{1, 0};
    for (SourceRange r : ranges) {
      if (r == previous) continue;
      if (!(r.begin >= previous.begin && r.end <= previous.end) && previous.begin <= previous.end) continue;  // not nested
      json next = {{"range", toJson(rangeOf(file, r))}};
      if (!node.is_null()) next["parent"] = std::move(node);
      node = std::move(next);
      previous = r;
    }
    if (node.is_null()) node = {{"range", toJson(Range{position, position})}};
    result.push_back(std::move(node));
  }
  return result;
}

}  // namespace argus::lsp

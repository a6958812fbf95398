// The builtin table (frontend/builtins.def) is the one definition of the
// builtins: sema's enum and arity come from it, and both editor grammars must
// list exactly its names. Adding a row without updating a grammar fails here.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "frontend/builtins.h"
#include "frontend/sema_internal.h"

namespace argus {
namespace {

std::string readRepoFile(const std::string& path) {
  std::ifstream in(std::string(ARGUS_SOURCE_DIR) + "/" + path, std::ios::binary);
  std::stringstream content;
  content << in.rdbuf();
  return content.str();
}

std::set<std::string> tableNames() {
  std::set<std::string> names;
  for (const BuiltinSpec& spec : builtinSpecs()) names.emplace(spec.name);
  return names;
}

// The words of every `syn keyword argusBuiltin ...` line.
std::set<std::string> vimBuiltins() {
  std::istringstream in(readRepoFile("editors/nvim/syntax/argus.vim"));
  std::set<std::string> names;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string syn, keyword, group, word;
    if (!(words >> syn >> keyword >> group) || syn != "syn" || keyword != "keyword" || group != "argusBuiltin") continue;
    while (words >> word) names.insert(word);
  }
  return names;
}

// The alternatives of the TextMate grammar's "builtin" rule: \\b(a|b|...)\\b.
std::set<std::string> textMateBuiltins() {
  std::string grammar = readRepoFile("editors/vscode/syntaxes/argus.tmLanguage.json");
  std::set<std::string> names;
  size_t rule = grammar.find("\"builtin\": {");
  if (rule == std::string::npos) return names;
  size_t open = grammar.find("\\\\b(", rule);
  size_t close = grammar.find(")\\\\b", open);
  if (open == std::string::npos || close == std::string::npos) return names;
  std::string alternatives = grammar.substr(open + 4, close - open - 4);
  std::istringstream in(alternatives);
  std::string name;
  while (std::getline(in, name, '|')) names.insert(name);
  return names;
}

// "missing: a, b; extra: c" between a grammar's names and the table's.
std::string difference(const std::set<std::string>& grammar, const std::set<std::string>& table) {
  std::string missing, extra;
  for (const std::string& name : table)
    if (!grammar.count(name)) missing += " " + name;
  for (const std::string& name : grammar)
    if (!table.count(name)) extra += " " + name;
  return "missing:" + missing + "; not in the table:" + extra;
}

TEST(BuiltinTable, NamesAreUniqueAndRowsWellFormed) {
  std::set<std::string> seen;
  for (const BuiltinSpec& spec : builtinSpecs()) {
    SCOPED_TRACE(std::string(spec.name));
    EXPECT_TRUE(seen.emplace(spec.name).second) << "listed twice";
    EXPECT_FALSE(spec.summary.empty());
    // Parameters with defaults come last: the required ones are a prefix.
    for (size_t i = spec.requiredCount(); i < spec.params.size(); ++i)
      EXPECT_NE(spec.params[i].find('='), std::string_view::npos) << "a required parameter after an optional one";
    EXPECT_EQ(spec.snippet().rfind(std::string(spec.name) + "(", 0), 0u) << spec.snippet();
    EXPECT_EQ(spec.signature().rfind(std::string(spec.name) + "(", 0), 0u);
  }
  EXPECT_TRUE(seen.count("copy_bulk") && seen.count("wgmma") && seen.count("pipelined") && seen.count("tag"));
}

TEST(BuiltinTable, SignatureAndSnippetAreDerivedFromTheParameters) {
  const BuiltinSpec* load = findBuiltinSpec("load");
  ASSERT_NE(load, nullptr);
  EXPECT_EQ(load->signature(), "load(view, other=0) -> tile");
  EXPECT_EQ(load->snippet(), "load(${1:view})");
  EXPECT_EQ(load->requiredCount(), 1u);
  EXPECT_EQ(load->paramNames(), (std::vector<std::string>{"view", "other"}));
  const BuiltinSpec* barrier = findBuiltinSpec("barrier");
  ASSERT_NE(barrier, nullptr);
  EXPECT_EQ(barrier->signature(), "barrier()");
  EXPECT_EQ(findBuiltinSpec("no_such_builtin"), nullptr);
}

TEST(BuiltinTable, SemaRecognizesEveryCallableRowInTableOrder) {
  const auto& table = sema::detail::builtinTable();
  ASSERT_EQ(table.size(), static_cast<size_t>(sema::detail::Builtin::Count_));
  size_t callable = 0;
  for (const BuiltinSpec& spec : builtinSpecs()) {
    const sema::detail::BuiltinInfo* info = sema::detail::findBuiltin(spec.name);
    if (spec.kind == BuiltinKind::Layout) {
      EXPECT_EQ(info, nullptr) << spec.name << " is only a layout= argument, not a name";
      continue;
    }
    ASSERT_NE(info, nullptr) << spec.name;
    EXPECT_EQ(static_cast<size_t>(info->id), callable++) << spec.name;
    EXPECT_EQ(info->params, spec.paramNames());
    EXPECT_EQ(info->required, spec.requiredCount());
  }
}

TEST(BuiltinTable, TheVimGrammarListsExactlyTheTable) {
  std::set<std::string> vim = vimBuiltins();
  ASSERT_FALSE(vim.empty()) << "no `syn keyword argusBuiltin` lines in editors/nvim/syntax/argus.vim";
  EXPECT_TRUE(vim == tableNames()) << difference(vim, tableNames()) << "; update editors/nvim/syntax/argus.vim from frontend/builtins.def";
}

TEST(BuiltinTable, TheTextMateGrammarListsExactlyTheTable) {
  std::set<std::string> textMate = textMateBuiltins();
  ASSERT_FALSE(textMate.empty()) << "no \"builtin\" rule in editors/vscode/syntaxes/argus.tmLanguage.json";
  EXPECT_TRUE(textMate == tableNames()) << difference(textMate, tableNames()) << "; update the \"builtin\" rule of argus.tmLanguage.json from frontend/builtins.def";
}

}  // namespace
}  // namespace argus

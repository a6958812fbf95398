#include "driver/fixit_check.h"

#include <algorithm>
#include <map>
#include <optional>
#include <regex>
#include <string>

#include "ir/ir.h"
#include "runtime/interp/random_run.h"

namespace argus {

namespace {

using Sizes = std::map<std::string, int64_t>;

std::map<std::string, int> errorCodes(const std::vector<Diagnostic>& diags) {
  std::map<std::string, int> codes;
  for (const Diagnostic& d : diags)
    if (d.severity == Severity::Error) ++codes[d.code()];
  return codes;
}

std::string sizesText(const Sizes& sizes) {
  std::string out;
  for (const auto& [name, value] : sizes) out += (out.empty() ? "" : ", ") + name + " = " + std::to_string(value);
  return out.empty() ? "the kernel's sizes" : out;
}

}  // namespace

Sizes counterexampleSizes(const Diagnostic& d, const ir::Function& fn) {
  Sizes out;
  if (!d.counterexample) return out;
  static const std::regex pair(R"(([A-Za-z_][A-Za-z0-9_]*) = (-?[0-9]+))");
  for (const auto& [key, value] : d.counterexample->facts) {
    if (key != "launch") continue;
    for (auto it = std::sregex_iterator(value.begin(), value.end(), pair); it != std::sregex_iterator(); ++it)
      for (const std::string& name : fn.sizeNames)
        if (name == (*it)[1]) out[name] = std::stoll((*it)[2]);
  }
  return out;
}

std::optional<std::string> differsFromSynchronousCopies(const ir::Module& module, const Sizes& witnessed) {
  for (const auto& fn : module.functions) {
    std::vector<Sizes> sets;
    Sizes witness, sixtyFour, ragged;
    for (const auto& [name, value] : witnessed)
      for (const std::string& size : fn->sizeNames)
        if (size == name) witness[name] = value;
    for (const std::string& name : fn->sizeNames) {
      sixtyFour[name] = 64;
      ragged[name] = 97;
      if (!witness.count(name)) witness[name] = 64;
    }
    sets = {witness, sixtyFour, ragged};
    for (size_t s = 0; s < sets.size(); ++s) {
      interp::RandomRunOptions options;
      options.maxOpsPerBlock = 5'000'000;
      const uint64_t seed = 7 + s;
      std::optional<interp::RandomRun> run = interp::runOnRandomInputs(*fn, sets[s], seed, options);
      options.synchronousCopies = true;
      std::optional<interp::RandomRun> reference = interp::runOnRandomInputs(*fn, sets[s], seed, options);
      if (!run || !reference || reference->fault) continue;  // too large, or no reference to compare with
      if (run->fault) return "the interpreter stops at " + sizesText(sets[s]) + ": " + run->faultText;
      std::string diff = interp::firstDifference(*fn, *reference, *run, "the kernel with synchronous copies");
      if (!diff.empty()) return "at " + sizesText(sets[s]) + ", " + diff;
    }
  }
  return std::nullopt;
}

namespace {

// The source with `edits` applied (non-overlapping; any order).
std::string applyEdits(const std::string& text, std::vector<const FixIt*> edits) {
  std::sort(edits.begin(), edits.end(), [](const FixIt* x, const FixIt* y) { return x->range.begin > y->range.begin; });
  std::string out = text;
  for (const FixIt* e : edits) out = out.substr(0, e->range.begin) + e->replacement + out.substr(e->range.end);
  return out;
}

bool sameEdit(const FixIt& x, const FixIt& y) {
  return x.range.begin == y.range.begin && x.range.end == y.range.end && x.replacement == y.replacement;
}

bool overlaps(const FixIt& x, const FixIt& y) {
  if (x.range.begin == x.range.end && y.range.begin == y.range.end) return false;  // two insertions
  return x.range.begin < y.range.end && y.range.begin < x.range.end;
}

}  // namespace

void verifyCheckerFixits(const SourceFile& file, const CompileOptions& options, std::vector<Diagnostic>& diagnostics,
                         size_t first) {
  CompileOptions fixedOptions = options;
  fixedOptions.verifyFixits = false;
  // Every distinct edit the checker suggests: a fix-it is judged with the others applied too,
  // as a user who takes every suggestion gets it (two reads of one stage get the same edit).
  std::vector<const FixIt*> all;
  for (size_t i = first; i < diagnostics.size(); ++i)
    for (const FixIt& fix : diagnostics[i].fixits) {
      if (fix.range.end > file.text().size() || fix.range.begin > fix.range.end) continue;
      bool seen = false;
      for (const FixIt* other : all) seen = seen || sameEdit(*other, fix);
      if (!seen) all.push_back(&fix);
    }
  std::map<std::string, std::optional<std::string>> verdicts;  // fixed source -> objection
  std::vector<std::vector<FixIt>> kept(diagnostics.size());
  for (size_t i = first; i < diagnostics.size(); ++i) {
    Diagnostic& d = diagnostics[i];
    for (const FixIt& fix : d.fixits) {
      if (options.cancelled && options.cancelled()) return;
      if (fix.range.end > file.text().size() || fix.range.begin > fix.range.end) continue;
      std::vector<const FixIt*> edits{&fix};
      for (const FixIt* other : all) {
        bool clash = sameEdit(*other, fix);
        for (const FixIt* e : edits) clash = clash || overlaps(*other, *e);
        if (!clash) edits.push_back(other);
      }
      std::string fixed = applyEdits(file.text(), edits);
      auto verdict = verdicts.find(fixed);
      if (verdict == verdicts.end()) {
        Compilation compilation(SourceFile(file.name(), fixed), fixedOptions);
        compilation.check();
        std::optional<std::string> objection;
        std::map<std::string, int> after = errorCodes(compilation.diagnostics());
        if (!after.empty()) {
          std::string codes;
          for (const auto& [code, n] : after) codes += (codes.empty() ? "" : ", ") + code;
          objection = "the kernel it gives (with the other fix-its applied) still has errors: " + codes;
        } else {
          Sizes witness;
          for (const auto& fn : compilation.ir().functions)
            for (const auto& [name, value] : counterexampleSizes(d, *fn)) witness[name] = value;
          objection = differsFromSynchronousCopies(compilation.ir(), witness);
          if (objection) objection = "with it, " + *objection;
        }
        verdict = verdicts.emplace(std::move(fixed), std::move(objection)).first;
      }
      if (verdict->second) d.notes.push_back("a fix-it (" + fix.message + ") was considered and withheld: " + *verdict->second);
      else kept[i].push_back(fix);
    }
  }
  for (size_t i = first; i < diagnostics.size(); ++i) diagnostics[i].fixits = std::move(kept[i]);
}

}  // namespace argus

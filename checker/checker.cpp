#include "checker/checker.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <future>

#include "checker/async_check.h"
#include "checker/invariant_check.h"
#include "checker/mbarrier_check.h"
#include "checker/solver_budget.h"
#include "checker/sync_check.h"
#include "checker/tag_check.h"
#include "checker/wgmma_check.h"

namespace argus::checker {

// Separation of global stores (AG2036), checker/invariant_separation.cpp.
void checkGlobalSeparation(const ir::Function& fn, DiagnosticSink& diags, const Options& options);

namespace {

// Runs one analysis, adding its wall time to its phase of the profile (when one is asked for).
template <typename Analysis>
void timed(const Options& options, const char* name, const Analysis& analysis) {
  Profile* profile = options.profile;
  if (!profile) return analysis();
  size_t index = 0;
  while (index < profile->phases.size() && profile->phases[index].name != name) ++index;
  if (index == profile->phases.size()) profile->phases.push_back({name});
  profile->current = index;
  auto start = std::chrono::steady_clock::now();
  analysis();
  profile->phases[index].ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

// How readable a counterexample's launch is, from its "launch" fact
// ("M = 257, N = 2, program_id(0) = 1"): a launch with an empty size (K = 0,
// nothing to multiply) after every other, then by the largest size; no
// launch at all first. Block and grid indices do not count.
std::pair<bool, int64_t> witnessWeight(const Diagnostic& d) {
  bool empty = false;
  int64_t largest = 0;
  if (!d.counterexample) return {empty, largest};
  for (const auto& [name, text] : d.counterexample->facts) {
    if (name != "launch") continue;
    size_t at = 0;
    while (at < text.size()) {
      size_t end = text.find(", ", at);
      if (end == std::string::npos) end = text.size();
      std::string_view term(text.data() + at, end - at);
      size_t eq = term.find(" = ");
      if (eq != std::string_view::npos && term.find('(') == std::string_view::npos) {
        int64_t value = std::strtoll(std::string(term.substr(eq + 3)).c_str(), nullptr, 10);
        empty = empty || value == 0;
        largest = std::max(largest, value);
      }
      at = end + 2;
    }
  }
  return {empty, largest};
}

// A function's findings in source order, and at one point the one with the
// most readable launch first: the first error a reader meets is the root
// cause (the load before the store it spoils) with the witness easiest to
// replay (no tensor empty, the sizes small).
void orderFindings(std::vector<Diagnostic>& diags, size_t first) {
  std::stable_sort(diags.begin() + static_cast<std::ptrdiff_t>(first), diags.end(),
                   [](const Diagnostic& a, const Diagnostic& b) {
                     if (a.range.begin != b.range.begin) return a.range.begin < b.range.begin;
                     return witnessWeight(a) < witnessWeight(b);
                   });
}

// The analyses of one function in two lanes, each with its own Z3 context and
// findings, so that on two cores they run side by side: the lanes are fixed
// (not whoever is free), so every analysis sees the same context history and
// gives the same counterexamples on every run and at any machine load. The
// split follows where the time goes in the examples (bench/results/compile.md):
// the pipeline and tag analyses in one lane, the global-memory invariants and
// the separation of stores in the other.
struct LaneResult {
  DiagnosticSink diags;
  Profile profile;
  bool stopped = false;
};

void runLane(int lane, const ir::Function& fn, const SourceFile* file, const Options& given, LaneResult& out) {
  SharedSolverContext context;
  Options options = given;
  options.solverContext = given.solverContext ? given.solverContext : &context;
  if (given.profile) options.profile = &out.profile;
  auto stop = [&] { return out.stopped = given.cancelled && given.cancelled(); };
  DiagnosticSink& diags = out.diags;
  if (lane == 0) {
    timed(options, "sync", [&] { checkSharedSync(fn, diags, file, options); });
    if (stop()) return;
    timed(options, "async", [&] { checkAsyncCopies(fn, diags, file, options); });
    if (stop()) return;
    timed(options, "mbarrier", [&] { checkMbarriers(fn, diags, file, options); });
    timed(options, "wgmma", [&] { checkWgmmaDescriptors(fn, diags); });
    if (stop()) return;
    timed(options, "tags", [&] { checkTagAssertions(fn, diags, file, options); });
  } else {
    // Separation first, in the fresh context: its grouped and persistent GEMM
    // queries cost 5 to 50% fewer resource units there than after the
    // invariants. Its findings still come after theirs.
    DiagnosticSink separation;
    timed(options, "separation", [&] { checkGlobalSeparation(fn, separation, options); });
    if (!stop()) timed(options, "invariants", [&] { checkBuiltinInvariants(fn, diags, file, options); });
    diags.append(separation.diagnostics());
  }
  stop();
}

void mergeProfile(Profile& into, const Profile& lane) {
  for (const Profile::Phase& phase : lane.phases) {
    auto same = std::find_if(into.phases.begin(), into.phases.end(), [&](const Profile::Phase& p) { return p.name == phase.name; });
    if (same == into.phases.end()) {
      into.phases.push_back(phase);
      continue;
    }
    same->ms += phase.ms;
    same->queries += phase.queries;
    same->unknown += phase.unknown;
    same->solverMs += phase.solverMs;
    same->units += phase.units;
  }
}

}  // namespace

void check(const ir::Module& module, DiagnosticSink& diags, const SourceFile* file, const Options& given) {
  auto stop = [&] { return given.cancelled && given.cancelled(); };
  for (const auto& fn : module.functions) {
    if (!fn || (given.accept && !given.accept(*fn))) continue;
    if (stop()) return;
    // One Z3 context per function and lane, gone when its analyses are done
    // (an empty context holds about 17 MB): per function, so that a kernel gets
    // the same answers and counterexamples whether it is checked alone (an
    // editor's re-check) or with the whole file. A caller's shared context
    // (Options::solverContext) is not thread-safe: then the lanes run in turn.
    const size_t first = diags.diagnostics().size();
    LaneResult lanes[2];
    bool parallel = given.parallel && !given.solverContext;
    if (parallel) {
      std::future<void> second =
          std::async(std::launch::async, [&] { runLane(1, *fn, file, given, lanes[1]); });
      runLane(0, *fn, file, given, lanes[0]);
      second.get();
    } else {
      runLane(0, *fn, file, given, lanes[0]);
      if (!lanes[0].stopped) runLane(1, *fn, file, given, lanes[1]);
    }
    for (LaneResult& lane : lanes) {
      diags.append(lane.diags.diagnostics());
      if (given.profile) mergeProfile(*given.profile, lane.profile);
    }
    orderFindings(diags.diagnostics(), first);
    if (lanes[0].stopped || lanes[1].stopped) return;
  }
}

}  // namespace argus::checker

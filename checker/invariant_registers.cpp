// The register budget (AG2033, a warning): ir/register_estimate.h's estimate of
// the registers the live register tiles take per thread, where it peaks.
#include "checker/invariant_check.h"
#include "ir/register_estimate.h"

namespace argus::checker {

void checkRegisterBudget(const ir::Function& fn, DiagnosticSink& diags) {
  const ir::TileRegisterPeak peak = ir::estimateTileRegisters(fn);
  if (!peak.at || peak.registers <= kRegistersPerThread) return;
  Diagnostic& d = diags.report(DiagId::RegisterBudget, peak.at->range,
                               {std::to_string(peak.registers), std::to_string(kRegistersPerThread)});
  // The largest tiles live there, as labels at their definitions.
  Counterexample cx;
  cx.facts.emplace_back("registers", std::to_string(peak.registers));
  cx.facts.emplace_back("limit", std::to_string(kRegistersPerThread));
  for (size_t i = 0; i < peak.liveAtPeak.size() && i < 3; ++i) {
    const auto& [registers, id] = peak.liveAtPeak[i];
    const ir::Value& v = fn.values[id];
    std::string what = (v.name.empty() ? std::string("a ") : "'" + v.name + "', a ") + shapeText(v.type.shape) + " " +
                       ir::dtypeName(v.type.dtype) + " tile, takes " + std::to_string(registers) +
                       (registers == 1 ? " register" : " registers") + " per thread";
    SourceRange where = v.def ? v.def->range : v.range;
    d.labels.push_back(Label{where, what});
    cx.facts.emplace_back(v.name.empty() ? "tile " + std::to_string(i + 1) : v.name,
                          std::to_string(registers) + " registers");
  }
  d.counterexample = std::move(cx);
  std::string note = "a tile's values are spread over the block's " + std::to_string(fn.numThreads()) +
                     " threads: use smaller tiles";
  if (fn.numWarps < 32)
    note += ", or more warps (warps=" + std::to_string(fn.numWarps * 2) + " halves the values per thread of large tiles)";
  d.notes.push_back(note);
}

}  // namespace argus::checker

// The final report of an agent run: Markdown for people, JSON for tools, a
// PNG plot of speed over candidates, and the incumbent program.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "agent/loop.h"

namespace argus::agent {

nlohmann::json reportJson(const LoopResult& result);
std::string reportMarkdown(const LoopResult& result);
// best.ag: the incumbent's source under a header naming the task, the starting
// kernel and the rewrites that led to it; empty without an incumbent.
std::string bestProgramText(const LoopResult& result);

// Speedup over the baseline per candidate as points, invalid candidates as
// red x marks on the axis, the incumbent as a step line, speedup 1 dashed.
bool writeSpeedPlot(const LoopResult& result, const std::string& path, std::string& error);

// Writes report.md, report.json, speed.png and (when there is an incumbent)
// best.ag into `dir`, creating it. False with `error` on the first failure.
bool writeReport(const LoopResult& result, const std::string& dir, std::string& error);

}  // namespace argus::agent

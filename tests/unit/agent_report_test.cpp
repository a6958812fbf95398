// The run report: JSON fields, Markdown content, and the PNG plot decoded
// back with libpng (size, points, x marks, the incumbent's step line).
#include <gtest/gtest.h>

#include <png.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "agent/report.h"

namespace argus::agent {
namespace {

namespace fs = std::filesystem;

CandidateRecord record(int index, std::optional<int> parent, Verdict verdict, std::optional<double> ms,
                       const std::string& action) {
  CandidateRecord r;
  r.index = index;
  r.parent = parent;
  r.candidate.action = action;
  r.candidate.source = "@kernel(grid=(1,))\ndef k_" + std::to_string(index) + "():\n    pass\n";
  r.evaluation.verdict = verdict;
  r.evaluation.timeMs = ms;
  r.evaluation.timeSource = "model";
  r.origin = index == 0 ? "baseline" : "planner";
  return r;
}

LoopResult sampleResult() {
  LoopResult result;
  result.ok = true;
  result.task.name = "gemm_test";
  result.task.kernelPath = "gemm_naive.ag";
  result.task.measure = {{"M", 256}};
  result.task.peerName = "cuBLAS";
  result.task.peerTflops = 100;
  result.runId = "run-1";
  result.timeSource = "model";
  result.candidates.push_back(record(0, std::nullopt, Verdict::Ok, 4.0, "baseline"));
  result.candidates.push_back(record(1, 0, Verdict::Ok, 2.0, "stage_operands_in_shared"));
  auto failed = record(2, 1, Verdict::CheckFailed, std::nullopt, "tile_sizes");
  failed.candidate.actionArgs = {{"BM", 256}};
  failed.evaluation.diagnosticCodes = {"AG2031"};
  failed.evaluation.detail = "AG2031 at 4:5: shared | memory over budget";
  result.candidates.push_back(failed);
  result.candidates.push_back(record(3, 1, Verdict::Ok, 1.0, "async_copies_pipelined"));
  result.candidates.push_back(record(4, 3, Verdict::Ok, 1.6, "swizzle_for_ldmatrix"));
  double best = 4.0;
  for (auto& r : result.candidates) {
    if (r.evaluation.verdict != Verdict::Ok) {
      r.incumbentSpeedup = 4.0 / best;
      continue;
    }
    r.speedup = 4.0 / *r.evaluation.timeMs;
    if (*r.evaluation.timeMs < best || r.index == 0) {
      best = *r.evaluation.timeMs;
      r.becameIncumbent = true;
      result.incumbent = r.index;
      result.evaluationsToBest = r.index + 1;
    }
    r.incumbentSpeedup = 4.0 / best;
  }
  result.candidates[3].evaluation.tflops = 50;
  result.notes.push_back("warm start: 3 cases");
  return result;
}

struct Image {
  int width = 0, height = 0;
  std::vector<uint8_t> rgb;
  bool any(uint8_t r, uint8_t g, uint8_t b) const {
    for (size_t i = 0; i + 2 < rgb.size(); i += 3)
      if (rgb[i] == r && rgb[i + 1] == g && rgb[i + 2] == b) return true;
    return false;
  }
};

Image readPng(const std::string& path) {
  Image image;
  png_image png{};
  png.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_file(&png, path.c_str())) return image;
  png.format = PNG_FORMAT_RGB;
  image.rgb.resize(PNG_IMAGE_SIZE(png));
  if (!png_image_finish_read(&png, nullptr, image.rgb.data(), 0, nullptr)) return image;
  image.width = static_cast<int>(png.width);
  image.height = static_cast<int>(png.height);
  return image;
}

TEST(AgentReport, JsonHasTheSummaryAndEveryCandidate) {
  auto json = reportJson(sampleResult());
  EXPECT_EQ(json["task"]["name"], "gemm_test");
  EXPECT_EQ(json["summary"]["candidates"], 5);
  EXPECT_EQ(json["summary"]["valid"], 4);
  EXPECT_EQ(json["summary"]["invalid"], 1);
  EXPECT_EQ(json["summary"]["incumbent"], 3);
  EXPECT_DOUBLE_EQ(json["summary"]["best_speedup"].get<double>(), 4.0);
  EXPECT_DOUBLE_EQ(json["summary"]["peer_fraction"].get<double>(), 0.5);
  EXPECT_EQ(json["summary"]["evaluations_to_best"], 4);
  ASSERT_EQ(json["candidates"].size(), 5u);
  EXPECT_EQ(json["candidates"][2]["verdict"], "check-failed");
  EXPECT_EQ(json["candidates"][2]["diagnostic_codes"][0], "AG2031");
  EXPECT_EQ(json["candidates"][2]["time_ms"], nullptr);
  EXPECT_EQ(json["candidates"][2]["args"]["BM"], 256);
  EXPECT_TRUE(json["candidates"][3]["became_incumbent"].get<bool>());
  EXPECT_EQ(json["candidates"][0]["parent"], nullptr);
}

TEST(AgentReport, MarkdownTablesTheRunAndShowsTheBestProgram) {
  std::string md = reportMarkdown(sampleResult());
  EXPECT_NE(md.find("# Argus agent report: gemm_test"), std::string::npos);
  EXPECT_NE(md.find("| speedup | 4.00x |"), std::string::npos) << md;
  EXPECT_NE(md.find("| of cuBLAS | 50.0 % |"), std::string::npos) << md;
  EXPECT_NE(md.find("check-failed AG2031"), std::string::npos);
  // A '|' in a diagnostic must not break the table.
  EXPECT_EQ(md.find("shared | memory"), std::string::npos);
  EXPECT_NE(md.find("## Best program (#3"), std::string::npos);
  EXPECT_NE(md.find("def k_3"), std::string::npos);
  EXPECT_NE(md.find("![speed over candidates](speed.png)"), std::string::npos);
}

TEST(AgentReport, WritesAllFilesAndAPlotWithPointsMarksAndTheStepLine) {
  fs::path dir = fs::temp_directory_path() / ("argus_agent_report_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  std::string error;
  ASSERT_TRUE(writeReport(sampleResult(), (dir / "nested").string(), error)) << error;
  for (const char* name : {"report.md", "report.json", "speed.png", "best.ag"})
    EXPECT_TRUE(fs::exists(dir / "nested" / name)) << name;
  std::ifstream best(dir / "nested" / "best.ag");
  std::string text((std::istreambuf_iterator<char>(best)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("def k_3"), std::string::npos);
  // Where it comes from, first: the starting kernel's comments stay in the source.
  EXPECT_EQ(text.rfind("# argus-agent, task gemm_test, candidate #3: gemm_naive.ag rewritten by "
                       "stage_operands_in_shared, async_copies_pipelined.\n", 0), 0u) << text;

  Image image = readPng((dir / "nested" / "speed.png").string());
  ASSERT_EQ(image.width, 800);
  ASSERT_EQ(image.height, 480);
  EXPECT_TRUE(image.any(31, 119, 180));  // candidate points
  EXPECT_TRUE(image.any(214, 39, 40));   // the invalid candidate's x
  EXPECT_TRUE(image.any(44, 160, 44));   // the incumbent step line
  EXPECT_TRUE(image.any(0, 0, 0));       // axes

  // Nothing valid at all: still a plot (axes and x marks), no best.ag.
  LoopResult empty = sampleResult();
  empty.incumbent.reset();
  for (auto& r : empty.candidates) {
    r.evaluation.verdict = Verdict::CheckFailed;
    r.speedup.reset();
    r.incumbentSpeedup.reset();
  }
  ASSERT_TRUE(writeReport(empty, (dir / "empty").string(), error)) << error;
  EXPECT_FALSE(fs::exists(dir / "empty" / "best.ag"));
  Image bare = readPng((dir / "empty" / "speed.png").string());
  EXPECT_TRUE(bare.any(214, 39, 40));
  EXPECT_FALSE(bare.any(44, 160, 44));
  fs::remove_all(dir);
}

TEST(AgentReport, UnwritableDirectoryIsAnError) {
  std::string error;
  EXPECT_FALSE(writeReport(sampleResult(), "/proc/argus-no-such-dir/report", error));
  EXPECT_FALSE(error.empty());
}

}  // namespace
}  // namespace argus::agent

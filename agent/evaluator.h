// Check -> compile -> validate -> measure for one candidate program, through
// the library API only (the same diagnostics `argusc --diagnostics-format=json`
// prints). A timing only counts after the candidate matched the task's
// reference on fresh random inputs at every validation shape, and only for a
// candidate that keeps the task's signature.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent/cost_model.h"
#include "agent/task.h"

namespace argus::agent {

namespace detail { class GpuMeasurer; }

struct Candidate {
  std::string source;
  std::string action = "baseline";          // the knowledge entry that made it
  nlohmann::json actionArgs = nlohmann::json::object();
  std::string description;                  // what changed
};

std::string stateHash(const std::string& source);

enum class Verdict { Ok, CheckFailed, CompileFailed, SignatureChanged, Wrong, RunFailed };
const char* verdictName(Verdict v);  // "ok", "check-failed", ...

struct Evaluation {
  Verdict verdict = Verdict::RunFailed;
  std::string detail;                  // one line: first error, worst mismatch, ...
  nlohmann::json diagnostics = nlohmann::json::array();  // JSON rendering
  std::vector<std::string> diagnosticCodes;
  int errorCount = 0, warningCount = 0;  // checker/compiler
  std::optional<double> timeMs;          // when verdict == Ok
  std::string timeSource;                // "gpu" | "model"
  std::optional<double> modelTimeMs;     // the cost model's prediction (always when compiled), before
                                         // calibration: what calibrate() pairs with measured times
                                         // (estimate.timeMs is the calibrated one)
  std::optional<double> tflops;
  CostEstimate estimate;
  // What validation ran (docs/agent/evaluation.md, "Evidence"): the seed, every
  // shape with its role, largest error and tolerance, shapes skipped and why;
  // for a failure, the shape it failed at. Empty for candidates that never ran.
  nlohmann::json evidence = nlohmann::json::object();
};

struct EvaluatorOptions {
  bool useGpu = true;        // measure on a GPU when one is found
  uint64_t seed = 0;         // inputs differ every evaluation; nonzero: the sequence of seeds repeats
  int gpuRepeat = 30;
  // Bound on each generated interpreter shape other than "tiles" (and on
  // running the measured shape in the interpreter): the cost model's FLOPs +
  // global bytes of the reference and the candidate together at that shape.
  double interpreterBudget = 2e7;
  // Test hook: the GPU side to use instead of opening a device.
  std::function<std::unique_ptr<detail::GpuMeasurer>()> gpuForTesting;
};

class Evaluator {
 public:
  Evaluator(const Task& task, EvaluatorOptions options);
  ~Evaluator();
  // True when a GPU was found and is used for measurement.
  bool hasGpu() const;
  std::string gpuName() const;
  Evaluation evaluate(const Candidate& candidate);
  // The text of the first requirement (`require(...)`) of the candidate's
  // kernel that the task's measured shape breaks: such a candidate can never
  // be timed, so the loop skips it without spending an evaluation. Parses and
  // lowers only; nothing when every requirement holds or the program does not
  // get that far (evaluate() then reports why).
  std::optional<std::string> requirementBrokenAtMeasure(const std::string& source) const;
  // Calibrates the cost model from (modelled, measured) pairs, e.g. from memory.
  void calibrate(const std::vector<std::pair<double, double>>& modelledMeasuredMs);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace argus::agent

// The experience graph memory (after KOPE): every attempt is a Case linked to
// the Case it was derived from, stored in SQLite (an embedded file; the schema
// keeps to portable SQL types so that PostgreSQL can hold it later), plus a
// Markdown journal. Retrieval filters exactly and ranks by a downstream score
// that credits what a step led to.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace argus::agent {

// Speed of a candidate over its predecessor: effective >= 1.05, partial
// [1, 1.05), ineffective [0.85, 1), negative < 0.85; a candidate that failed
// to compile, check or validate is "invalid".
std::string outcomeBucket(std::optional<double> speedRatio, bool valid);

struct Case {
  int64_t id = 0;                    // assigned by record()
  std::optional<int64_t> predecessor;
  std::string runId;                 // one agent run
  std::string task;                  // task name
  nlohmann::json taskFeatures = nlohmann::json::object();  // op kind, dtype, sizes, kernel tags
  std::string stateHash;             // hash of the candidate's program text + defines
  std::string action;                // knowledge entry name ("baseline" for the start)
  nlohmann::json actionArgs = nlohmann::json::object();
  std::vector<std::string> diagnosticCodes;
  nlohmann::json diagnostics = nlohmann::json::array();  // as argusc --diagnostics-format=json
  bool compiled = false, correct = false;
  std::optional<double> timeMs;       // measured (GPU) or modelled
  std::string timeSource;             // "gpu" | "model"
  std::optional<double> speedRatio;   // over the predecessor
  std::optional<double> speedup;      // over the task's baseline
  std::string bucket;                 // outcomeBucket()
  double confidence = 0;              // 0..1, how far the measurement is trusted
  double reward = 0;                  // the planner's reward r_v
  std::string source;                 // the program text
  std::string createdAt;              // ISO 8601, set by record()
  std::string verdict;                // the evaluator's verdict ("ok", "wrong", ...; empty before schema 2)
  std::string verdictDetail;          // its reason: the worst mismatch and shape of a `wrong`, ...
  nlohmann::json evidence = nlohmann::json::object();  // Evaluation::evidence: seed, shapes, errors
  // Why this Case, once stored as correct, was later found wrong (re-evaluated
  // by a stronger check); empty when it never was. Such a Case is no longer
  // correct, and never replayed.
  std::string invalidated;
};

struct CaseFilter {
  std::optional<std::string> task, action, bucket, runId;
  std::optional<std::string> featureKey, featureValue;  // taskFeatures[key] == value (as text)
  std::optional<bool> correct;
  int limit = 50;
};

class ExperienceMemory {
 public:
  // Opens (creating) the database; nullptr with `error` set when it cannot.
  // ":memory:" is an in-memory database. The journal is written beside a file
  // database as <path>.journal.md.
  static std::unique_ptr<ExperienceMemory> open(const std::string& path, std::string& error);
  virtual ~ExperienceMemory() = default;

  virtual int64_t record(Case c) = 0;  // assigns id and createdAt, appends to the journal
  virtual std::optional<Case> get(int64_t id) = 0;
  virtual std::vector<Case> find(const CaseFilter& filter) = 0;  // newest first
  virtual std::vector<int64_t> successors(int64_t id) = 0;
  // d(v) = 0.5 * r_v + 0.5 * 0.7 * sum of d(successors), over the stored graph.
  virtual double downstreamScore(int64_t id) = 0;
  // Cases passing the filter, ranked by downstream score (highest first).
  virtual std::vector<Case> retrieve(const CaseFilter& filter) = 0;
  // Per action: tries, mean reward and bucket counts among Cases passing the
  // filter (what the planner warm-starts its values from).
  struct ActionStats {
    std::string action;
    int tries = 0;
    double meanReward = 0, meanDownstream = 0;
    int effective = 0, partial = 0, ineffective = 0, negative = 0, invalid = 0;
  };
  virtual std::vector<ActionStats> actionStats(const CaseFilter& filter) = 0;
  virtual nlohmann::json exportJson(const CaseFilter& filter) = 0;
  // Marks every correct Case of the program `stateHash` as found wrong, with
  // `reason`: correct false, bucket "invalid", reward 0. Returns how many.
  virtual int markWrong(const std::string& stateHash, const std::string& reason) = 0;
};

nlohmann::json caseToJson(const Case& c);

// `argus-agent memory list|show|export ...`; returns the exit status.
int runMemoryCommand(const std::vector<std::string>& args, std::string& out, std::string& err);

}  // namespace argus::agent

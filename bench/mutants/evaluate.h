// Judges one mutant of a kernel twice, independently: by the checker (does it
// report an error, and does its counterexample replay?) and by the CPU
// interpreter as the oracle (at several sizes, with the same random inputs,
// does the mutant fault or compute something other than the original?).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "support/diagnostic.h"

namespace argus::mutants {

using Sizes = std::map<std::string, int64_t>;

struct Baseline;  // the unmutated kernel's IR and its runs at each size set

struct KernelUnderTest {
  std::string path;
  std::string source;
  std::string arch;                      // from the file's '# arch:' line, else sm_90
  std::vector<Sizes> sizeSets;           // where the original runs cleanly (drawn by prepare)
  Sizes baseSizes;                       // the file's '# run:' sizes, else 64 for each
  std::vector<std::pair<std::string, std::string>> defines;  // the '# run:' line's -D NAME=VALUE
  std::vector<std::string> baselineErrors;  // checker/front-end errors of the unmutated kernel
  std::string skipReason;                // non-empty: the kernel cannot serve as a baseline
  std::shared_ptr<const Baseline> baseline;
};

struct EvalOptions {
  int sizeSets = 3;        // random size sets besides the base sizes
  uint64_t seed = 1;
  int64_t maxElements = 1 << 20;  // per tensor, to keep the interpreter quick
  uint64_t maxOpsPerBlock = 20'000'000;
};

// Checks the unmutated kernel and draws the size sets at which it runs cleanly.
KernelUnderTest prepare(const std::string& path, const std::string& source, const EvalOptions& options);

struct Verdict {
  // Front end: the mutant is not a program (sema error); nothing else is judged.
  bool rejected = false;
  std::string rejectedBy;  // the first front-end error's code and message
  // Checker.
  std::vector<std::string> errorCodes;    // AG codes of the checker's errors
  std::vector<std::string> warningCodes;
  std::string firstError;                 // "AG2003 14:9 message"
  double checkMs = 0;
  // Interpreter.
  bool distinguishable = false;
  std::string evidence;                   // "fault at M=.., N=..: ..." or "output C differs at ..."
  // The checker's first error replayed in the interpreter at its counterexample's sizes.
  bool witnessReplayed = false;
  std::string witnessSizes;
};

Verdict evaluate(const KernelUnderTest& kernel, const std::string& mutantSource, const EvalOptions& options);

}  // namespace argus::mutants

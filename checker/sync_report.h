// Turns a satisfiable race query into a diagnostic with a counterexample, and an
// undecided one into a "cannot prove" warning (internal to the checker).
#pragma once

#include <z3++.h>

#include <string>

#include "checker/sync_encode.h"
#include "support/diagnostic.h"
#include "support/source.h"

namespace argus::checker {

struct RacePair {
  const ir::Function& fn;
  const FunctionAccesses& fa;
  const Pending& earlier;
  int later;
  const SourceFile* file;
};

void reportRace(const RacePair& pair, const z3::model& model, PairEncoder& encoder, Side& first, Side& second,
                DiagnosticSink& diags);
void reportCannotProve(const RacePair& pair, const std::string& reason, DiagnosticSink& diags);

}  // namespace argus::checker

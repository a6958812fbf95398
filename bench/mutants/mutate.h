// Mutation operators over a kernel's source text: the choreography mistakes a
// person or an agent makes (an index or stage off by one, program ids swapped,
// a wait count changed, a barrier or commit dropped or moved, dot operands
// swapped, a swizzle on one side only, store coordinates transposed, a loop
// bound changed). Each mutant is the whole source with one small edit, so it
// goes through the same front door as a user's file. Mutations are made on the
// token stream (comments and strings are never touched).
#pragma once

#include <string>
#include <vector>

namespace argus::mutants {

struct Mutant {
  std::string op;           // the operator's name, e.g. "int-off-by-one"
  std::string description;  // what changed, e.g. "wait_group(1) -> wait_group(0)"
  unsigned line = 0;        // 1-based line of the edit
  std::string text;         // the mutated source
};

// Names of every operator, in the order mutantsOf applies them.
const std::vector<std::string>& operatorNames();

// Every mutant of `source` (a whole .ag file) that the operators make, in
// source order per operator. Mutants are syntactically plausible but may be
// rejected by sema; the caller finds out.
std::vector<Mutant> mutantsOf(const std::string& fileName, const std::string& source);

}  // namespace argus::mutants

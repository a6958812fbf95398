// Linked into every test binary: a diagnostic reported with arguments that do
// not fit its format (support/diagnostic_kinds.def) fails the running test, so
// that the whole suite checks every report it makes against the registry.
#include <gtest/gtest.h>

#include "support/diagnostic.h"

namespace {

void failTheTest(argus::DiagId, const std::string& problem) {
  ADD_FAILURE() << "a diagnostic's arguments do not fit its format: " << problem;
}

[[maybe_unused]] const bool installed = (argus::setDiagArgumentCheck(&failTheTest), true);

}  // namespace

#!/usr/bin/env bash
# The whole test suite: install, build everything (the tests and benchmarks too,
# which scripts/main.sh leaves out), run every test (unit, golden, fuzz, ptxas).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
cd build
ctest --output-on-failure -j "${JOBS:-$(nproc)}"

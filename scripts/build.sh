#!/usr/bin/env bash
# Configures and builds Argus into ./build (Release, ccache, ninja).
#   bash scripts/build.sh                      everything (libraries, tools, tests, benchmarks)
#   bash scripts/build.sh argusc argus-agent   only these targets and what they need
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
EXTRA=()
[ "${CI:-}" = "true" ] && EXTRA+=(-DARGUS_WERROR=ON)
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=${BUILD_TYPE:-Release} "${EXTRA[@]}" >/dev/null
TARGETS=()
for t in "$@"; do TARGETS+=(--target "$t"); done
cmake --build "$BUILD_DIR" -j "${JOBS:-$(nproc)}" "${TARGETS[@]}"

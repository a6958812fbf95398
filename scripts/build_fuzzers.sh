#!/usr/bin/env bash
# Builds the fuzz targets (tests/fuzz/fuzz_*.cpp) with clang, libFuzzer and
# AddressSanitizer + UndefinedBehaviorSanitizer into ./build-fuzz. The project's
# own build stays gcc; this one only builds the libraries the targets need.
# Needs clang-14 and libclang-rt-14-dev (Debian 12: apt-get install clang-14 libclang-rt-14-dev).
# Run a fuzzer: see tests/fuzz/README.md and bench/results/fuzzing.md.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build-fuzz}
CXX=${FUZZ_CXX:-clang++-14}
# vptr checks need RTTI, which LLVM's classes lack; UB aborts (no recovery) so the fuzzer sees it.
SANITIZE="-fsanitize=address,undefined -fno-sanitize=vptr -fno-sanitize-recover=undefined"
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER="$CXX" \
  -DCMAKE_CXX_FLAGS="$SANITIZE -fsanitize=fuzzer-no-link -fno-omit-frame-pointer -gline-tables-only" \
  -DARGUS_LIBFUZZER=ON >/dev/null
cmake --build "$BUILD_DIR" -j "${JOBS:-2}" --target fuzz_pipeline_libfuzzer fuzz_lsp_libfuzzer "$@"

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
# clang-14 rejects the ANTLR 4.9 runtime's misc/InterpreterDataReader.h (a user-provided
# default constructor of InterpreterData default-initializes a Vocabulary, whose
# own defaulted one is deleted: const members). gcc accepts it. Nothing of ours
# uses InterpreterData, so a copy of the headers with that constructor defaulted
# (hence deleted, harmlessly) is used for this build only.
ANTLR_HEADERS=/usr/include/antlr4-runtime
ANTLR_COMPAT="$PWD/$BUILD_DIR/antlr4-runtime-clang"
if [ ! -f "$ANTLR_COMPAT/antlr4-runtime.h" ]; then
  mkdir -p "$BUILD_DIR"
  rm -rf "$ANTLR_COMPAT.tmp" && cp -r "$ANTLR_HEADERS" "$ANTLR_COMPAT.tmp"
  sed -i 's/InterpreterData() {}; \/\/ For invalid content./InterpreterData() = default; \/\/ For invalid content./' \
    "$ANTLR_COMPAT.tmp/misc/InterpreterDataReader.h"
  grep -q 'InterpreterData() = default;' "$ANTLR_COMPAT.tmp/misc/InterpreterDataReader.h"
  mv "$ANTLR_COMPAT.tmp" "$ANTLR_COMPAT"
fi
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER="$CXX" \
  -DCMAKE_CXX_FLAGS="$SANITIZE -fsanitize=fuzzer-no-link -fno-omit-frame-pointer -gline-tables-only" \
  -DARGUS_LIBFUZZER=ON -DARGUS_ANTLR4_INCLUDE_DIR="$ANTLR_COMPAT" >/dev/null
cmake --build "$BUILD_DIR" -j "${JOBS:-2}" --target fuzz_pipeline_libfuzzer fuzz_lsp_libfuzzer "$@"

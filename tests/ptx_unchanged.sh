#!/usr/bin/env bash
# Every PTX (and launch metadata) the GPU benchmarks run, built by bench/build_gpu_ptx.sh, must
# be byte-identical to the digests in tests/golden/ptx_sha256.txt: a refactoring of the IR,
# the checker or codegen that is meant to change nothing proves it here. A change meant to
# alter generated code re-records them (ARGUS_UPDATE_GOLDEN=1) and says so in its commit;
# the GPU check (bench/gpu_check.py) is then owed on the device.
# usage: bash tests/ptx_unchanged.sh ARGUSC
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
argusc="$1"
golden="$root/tests/golden/ptx_sha256.txt"
# The digests hold for one LLVM (the NVPTX backend writes the PTX): recorded with its version,
# and a machine with another one skips the comparison (exit 77, ctest's SKIP_RETURN_CODE)
# rather than failing on a toolchain update.
llvm_version="$(/usr/lib/llvm-19/bin/llvm-config --version 2>/dev/null || echo unknown)"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
if ! bash "$root/bench/build_gpu_ptx.sh" "$out" "$argusc" > "$out/build.log" 2>&1; then
  cat "$out/build.log" >&2
  exit 1
fi
{ echo "# llvm $llvm_version"; (cd "$out" && sha256sum -- *.ptx *.json); } > "$out/digests.txt"
if [[ "${ARGUS_UPDATE_GOLDEN:-}" != 1 ]] && [[ "$(head -n1 "$golden")" != "# llvm $llvm_version" ]]; then
  echo "the digests were recorded with $(head -n1 "$golden" | cut -c3-), this machine has LLVM $llvm_version: not compared"
  exit 77
fi
if [[ "${ARGUS_UPDATE_GOLDEN:-}" == 1 ]]; then
  cp "$out/digests.txt" "$golden"
  echo "recorded $(grep -vc "^#" "$golden") digests in $golden"
  exit 0
fi
if ! diff -u "$golden" "$out/digests.txt"; then
  echo "generated PTX or metadata differs from tests/golden/ptx_sha256.txt (lines above);" \
       "if the change is meant, re-record with ARGUS_UPDATE_GOLDEN=1 and run bench/gpu_check.py on a GPU" >&2
  exit 1
fi
echo "all $(grep -vc "^#" "$golden") PTX and metadata files unchanged"

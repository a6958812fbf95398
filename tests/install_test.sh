#!/usr/bin/env bash
# `cmake --install` puts argusc and argus-lsp into PREFIX/bin, where a shell
# with that directory on PATH finds and runs them (issue 21: the editors look
# for argus-lsp on PATH).
#   bash tests/install_test.sh BUILD_DIR
set -euo pipefail
build="$1"
prefix="$(mktemp -d)"
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" >/dev/null
for tool in argusc argus-lsp; do
  [[ -x "$prefix/bin/$tool" ]] || { echo "FAIL: $tool not installed in $prefix/bin"; exit 1; }
done
# A login-like shell with only the prefix and the system directories on PATH.
found="$(env -i HOME="$prefix" PATH="$prefix/bin:/usr/bin:/bin" bash -c 'command -v argus-lsp; argus-lsp --version; argusc --version')"
echo "$found"
grep -qx "$prefix/bin/argus-lsp" <<<"$found" || { echo "FAIL: argus-lsp is not found on PATH"; exit 1; }
grep -q "^argus-lsp " <<<"$found" && grep -q "^argusc version " <<<"$found" || { echo "FAIL: the installed tools do not run"; exit 1; }
echo "PASS: installed into $prefix/bin and found on PATH"

#!/usr/bin/env bash
# The VS Code extension: npm ci, type-check (tsc --noEmit), compile, unit tests
# (grammar tokenized by vscode-textmate, settings mapping, manifest), and the
# .vsix package (written to $1, default build/editors/argus.vsix, never into git).
#   bash tests/editors/run_vscode_tests.sh [VSIX_OUTPUT]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
ext="$repo/editors/vscode"
vsix="${1:-$repo/build/editors/argus.vsix}"
source "$here/lib.sh"

command -v node >/dev/null || skip "node is not installed"
command -v npm >/dev/null || skip "npm is not installed"
npm_ci "$ext"
cd "$ext"
echo "== tsc --noEmit"
npx --no-install tsc -p . --noEmit
echo "== tsc"
npx --no-install tsc -p .
echo "== unit tests"
node --test test/
echo "== vsce package"
mkdir -p "$(dirname "$vsix")"
npx --no-install vsce package --allow-missing-repository --skip-license -o "$vsix" </dev/null >/dev/null
test -s "$vsix"
# The package must hold the compiled client, the grammar and the runtime client library, and no sources.
listing="$(python3 -c 'import sys, zipfile; print("\n".join(zipfile.ZipFile(sys.argv[1]).namelist()))' "$vsix")"
for f in extension/package.json extension/out/extension.js extension/syntaxes/argus.tmLanguage.json \
         extension/language-configuration.json extension/snippets/argus.json \
         extension/node_modules/vscode-languageclient/package.json; do
  grep -qx "$f" <<<"$listing" || { echo "FAIL: $f missing from $vsix"; exit 1; }
done
if grep -qE '^extension/(src/|node_modules/(typescript|@vscode/vsce)/)' <<<"$listing"; then
  echo "FAIL: $vsix bundles sources or build tools"; exit 1
fi
echo "packaged $vsix ($(wc -c <"$vsix") bytes)"

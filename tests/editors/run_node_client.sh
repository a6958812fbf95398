#!/usr/bin/env bash
# Node client (vscode-jsonrpc + vscode-languageserver-protocol) against the real server.
#   bash tests/editors/run_node_client.sh [path/to/argus-lsp [path/to/argusc]]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
server="${1:-${ARGUS_LSP:-$repo/build/argus-lsp}}"
compiler="${2:-${ARGUSC:-$(dirname "$server")/argusc}}"
source "$here/lib.sh"

command -v node >/dev/null || skip "node is not installed"
command -v npm >/dev/null || skip "npm is not installed"
[[ -x "$server" ]] || skip "argus-lsp not built at $server"
npm_ci "$here"
[[ -x "$compiler" ]] || skip "argusc not built at $compiler"
ARGUS_LSP="$server" ARGUSC="$compiler" node --test "$here/node_client.test.mjs" "$here/node_progress.test.mjs"

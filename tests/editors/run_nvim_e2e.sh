#!/usr/bin/env bash
# Headless Neovim (0.7+) with editors/nvim against the real server.
#   bash tests/editors/run_nvim_e2e.sh [path/to/argus-lsp]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
server="${1:-${ARGUS_LSP:-$repo/build/argus-lsp}}"
source "$here/lib.sh"

command -v nvim >/dev/null || skip "nvim is not installed (apt-get install neovim, or bash scripts/setup.sh)"
[[ -x "$server" ]] || skip "argus-lsp not built at $server"
cd "$repo"
# HOME and XDG dirs point at a scratch dir so that no user config or shada is touched.
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
HOME="$scratch" XDG_CONFIG_HOME="$scratch/config" XDG_DATA_HOME="$scratch/data" XDG_STATE_HOME="$scratch/state" \
  ARGUS_LSP="$server" timeout 120 nvim --headless -u NONE -i NONE -c 'luafile tests/editors/nvim_e2e.lua' </dev/null

#!/usr/bin/env bash
# editors/nvim in headless Neovim without a server (syntax, indent, settings, 0.8+ path).
#   bash tests/editors/run_nvim_unit.sh
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
source "$here/lib.sh"

command -v nvim >/dev/null || skip "nvim is not installed (apt-get install neovim, or bash scripts/setup.sh)"
cd "$repo"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
HOME="$scratch" XDG_CONFIG_HOME="$scratch/config" XDG_DATA_HOME="$scratch/data" XDG_STATE_HOME="$scratch/state" \
  timeout 120 nvim --headless -u NONE -i NONE -c 'luafile tests/editors/nvim_unit.lua' </dev/null

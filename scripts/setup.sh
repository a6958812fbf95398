#!/usr/bin/env bash
# Installs every Debian package Argus needs. Idempotent: installs only what is missing.
set -euo pipefail
PACKAGES=(
  build-essential cmake ninja-build ccache pkg-config git
  default-jre-headless antlr4 libantlr4-runtime-dev uuid-dev
  llvm-19-dev libzstd-dev zlib1g-dev
  libz3-dev libjemalloc-dev nlohmann-json3-dev libgtest-dev libgmock-dev libbenchmark-dev
  libsqlite3-dev libcurl4-openssl-dev libpng-dev
)
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO=sudo
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "setup: all packages present"
fi

# --- Editors: Neovim for the headless end-to-end LSP test (tests/editors/run_nvim_e2e.sh).
# Separate from the list above so that a failure here never blocks the C++ build;
# without nvim that test reports "Skipped". Idempotent like the step above.
if ! command -v nvim >/dev/null 2>&1; then
  echo "setup: installing neovim (editor tests)"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO=sudo
  export DEBIAN_FRONTEND=noninteractive
  { $SUDO apt-get update -qq && $SUDO apt-get install -y -qq --no-install-recommends neovim; } ||
    echo "setup: warning: could not install neovim; the Neovim editor test will be skipped"
fi

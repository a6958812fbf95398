#!/usr/bin/env bash
# Builds Argus (if needed) and installs argusc, argus-lsp, argus-replay and
# argus-agent into PREFIX/bin (default: ~/.local), then checks that a shell
# finds them on PATH and, if not, prints the line to add to ~/.profile.
#   scripts/install.sh [PREFIX]      BUILD_DIR=build (default) JOBS=N
set -euo pipefail
cd "$(dirname "$0")/.."
PREFIX=${1:-${PREFIX:-$HOME/.local}}
BUILD_DIR=${BUILD_DIR:-build}
# Incremental: nothing is rebuilt when the build is up to date.
BUILD_DIR="$BUILD_DIR" bash scripts/build.sh
cmake --install "$BUILD_DIR" --prefix "$PREFIX"
BIN=$(cd "$PREFIX/bin" && pwd)
case ":$PATH:" in
  *":$BIN:"*)
    echo "install: argusc and argus-lsp are in $BIN, which is on PATH" ;;
  *)
    echo "install: $BIN is not on PATH; add it (then open a new shell, and restart VS Code):"
    echo "  echo 'export PATH=\"$BIN:\$PATH\"' >> ~/.profile" ;;
esac

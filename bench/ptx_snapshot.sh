#!/usr/bin/env bash
# Writes the PTX of every example (at the arch its '# arch:' line names) into
# DIR, one file per example, so that two builds can be compared byte for byte:
#   bash bench/ptx_snapshot.sh build/argusc /tmp/ptx_before
#   ... change the compiler, rebuild ...
#   bash bench/ptx_snapshot.sh build/argusc /tmp/ptx_after && diff -r /tmp/ptx_before /tmp/ptx_after
set -euo pipefail
ARGUSC=${1:?usage: ptx_snapshot.sh ARGUSC DIR}
DIR=${2:?usage: ptx_snapshot.sh ARGUSC DIR}
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
mkdir -p "$DIR"
for f in "$ROOT"/examples/*.ag; do
  name=$(basename "$f" .ag)
  if ! "$ARGUSC" "$f" -o "$DIR/$name.ptx" >"$DIR/$name.diagnostics" 2>&1; then
    echo "$name: argusc failed (see $DIR/$name.diagnostics)" >&2
  fi
done
ls "$DIR"/*.ptx | wc -l

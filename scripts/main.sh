#!/usr/bin/env bash
# The main job: install, build, then compile every kernel in examples/ to PTX,
# assemble it with ptxas, and run it on the CPU interpreter, showing diagnostics.
# It builds only the programs it runs, each just before it is needed: argusc (146
# build steps, about 3 minutes on 2 cores) before the examples, argus-agent (32 more)
# before the agent; none of the tests. scripts/test.sh builds and runs the rest.
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh argusc || exit 1
ARGUSC=build/argusc
OUT=build/examples
mkdir -p "$OUT"
status=0
for src in examples/*.ag; do
  name=$(basename "$src" .ag)
  # An example that needs Hopper-only instructions says so in a line '# arch: sm_90a'.
  arch=$(sed -n 's/^# arch: //p' "$src" | head -n1)
  arch=${arch:-sm_90}
  echo "== $src (--arch=$arch)"
  if "$ARGUSC" --arch="$arch" "$src" -o "$OUT/$name.ptx"; then
    echo "   PTX:   $OUT/$name.ptx ($(grep -c '^\s*\.entry\|^\.visible .entry' "$OUT/$name.ptx") kernel(s))"
    if "$ARGUSC" --arch="$arch" --emit=cubin "$src" -o "$OUT/$name.cubin"; then
      echo "   cubin: $OUT/$name.cubin (ptxas -arch=$arch accepted it)"
    else
      status=1
    fi
  else
    echo "   failed: see the diagnostics above"
    status=1
  fi
  # Sizes for the CPU run come from the example's header comment: '# run: --size N=1000 ...'
  run_args=$(sed -n 's/^# run: //p' "$src" | head -n1)
  if [ -n "$run_args" ]; then
    # shellcheck disable=SC2086
    "$ARGUSC" run --cpu "$src" $run_args || status=1
  fi
done
for src in examples/broken/*.ag; do
  echo "== $src (broken on purpose, to show the diagnostics)"
  "$ARGUSC" "$src" -o "$OUT/broken.ptx" && status=1
done
# The optimization agent, offline: validation on the CPU interpreter, ranking by
# the cost model (docs/agent.md). A small task and budget keep this quick.
bash scripts/build.sh argus-agent || exit 1
echo "== argus-agent run examples/agent/gemm_small.task.json (offline: CPU interpreter + cost model)"
build/argus-agent run examples/agent/gemm_small.task.json --no-gpu --budget 6 --memory :memory: \
  --out "$OUT/agent-report" || status=1
exit $status

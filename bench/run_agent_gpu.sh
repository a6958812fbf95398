#!/usr/bin/env bash
# The agent's GPU runs, on the GPU machine, which has no LLVM:
#   (here)  cmake --build build --target argus-agent
#           bash scripts/bundle.sh build-gpu/bundle/agent.tar.xz build/argus-agent
#   (there) bash bench/run_agent_gpu.sh build-gpu/bundle/agent.tar.xz OUTDIR [gemm|softmax]
# gemm (the default): run 1 optimizes examples/agent/gemm_naive.ag for 4096^3
# with an empty memory; run 2 the related 2048x8192x4096 task with run 1's
# memory; run 3 the linear layer C = A @ W^T (gemm_naive_nt.ag) at 4096^3 with
# both. The tasks are sm_90a: the search goes on to TMA, wgmma and persistent
# tiles. cuBLAS is timed at every shape in the same session for the fraction.
# softmax: run 1 optimizes examples/agent/softmax_naive.ag (bf16) for 8192 x
# 8192 with an empty memory, run 2 the related 16384 x 4096 task with run 1's
# memory; Triton's tutorial softmax (bench/triton_rows.py, autotuned) and
# torch.softmax are timed at both shapes in the same session.
# Peers are timed as the agent times a candidate: one launch between two CUDA
# events, after warm-up, the median of 30 (bench/peer_timing.py).
# AGENT_SECONDS bounds each run (its report is rewritten after every candidate).
set -euo pipefail
bundle=$1 out=$2
mkdir -p "$out"
work=$(mktemp -d)
tar -C "$work" -xJf "$bundle"
export ARGUS_KNOWLEDGE_DIR=$PWD/agent/knowledge
mem=$out/memory.db
rm -f "$mem" "$mem.journal.md"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader >"$out/machine.txt" || true
limit=${AGENT_SECONDS:-3600}
suite=${3:-gemm}
agent() {  # agent TASK RUN SEED
  timeout "$limit" "$work/argus-bundle/run" argus-agent run "examples/agent/$1.task.json" --memory "$mem" \
    --out "$out/$2" --seed "$3" 2>&1 | tee "$out/$2.log" || true
}
case $suite in
gemm)
  agent gemm_4096 run1 1
  agent gemm_2048x8192 run2 2
  agent gemm_nt_4096 run3 3
  PYTHONPATH=bench python3 - "$out/peer.json" <<'PY'
import json, sys, torch
from peer_timing import median_ms
res = {}
for (m, n, k, nt) in [(4096, 4096, 4096, False), (2048, 8192, 4096, False), (4096, 4096, 4096, True)]:
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, k, device="cuda", dtype=torch.bfloat16).t() if nt else torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
    c = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
    ms = median_ms(lambda: torch.matmul(a, b, out=c))
    res[f"{m}x{n}x{k}" + (" A@W^T" if nt else "")] = {"cublas_ms": ms, "cublas_tflops": 2 * m * n * k / ms / 1e9}
json.dump(res, open(sys.argv[1], "w"), indent=1)
print(res)
PY
  ;;
softmax)
  agent softmax_8192 run1 1
  agent softmax_16384x4096 run2 2
  PYTHONPATH=bench python3 - "$out/peer.json" <<'PY'
import json, sys, torch
import triton_rows
from peer_timing import median_ms
res = {}
for (m, n) in [(8192, 8192), (16384, 4096)]:
    x = torch.randn(m, n, device="cuda", dtype=torch.bfloat16)
    y = torch.empty_like(x)
    ref = torch.softmax(x.float(), dim=1)
    triton_rows.softmax(x, y)
    err = ((y.float() - ref).norm() / ref.norm()).item()
    res[f"{m}x{n}"] = {"triton_ms": median_ms(lambda: triton_rows.softmax(x, y)), "triton_rel_error": err,
                       "triton_config": triton_rows.best_config("softmax", n),
                       "torch_ms": median_ms(lambda: torch.softmax(x, dim=1))}
json.dump(res, open(sys.argv[1], "w"), indent=1)
print(res)
PY
  ;;
*) echo "run_agent_gpu.sh: unknown suite '$suite' (gemm or softmax)" >&2; exit 2 ;;
esac

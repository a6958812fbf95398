#!/usr/bin/env bash
# The agent's two GPU runs (issue 5), on the GPU machine, which has no LLVM:
#   (here)  cmake --build build --target argus-agent
#           bash scripts/bundle.sh build-gpu/bundle/agent.tar.xz build/argus-agent
#   (there) bash bench/run_agent_gpu.sh build-gpu/bundle/agent.tar.xz OUTDIR
# Run 1 optimizes examples/agent/gemm_naive.ag for 4096^3 with an empty
# memory; run 2 optimizes the related 2048x8192x4096 task with run 1's memory;
# run 3 the linear layer C = A @ W^T (gemm_naive_nt.ag) at 4096^3 with both.
# The tasks are sm_90a: the search goes on to TMA, wgmma and persistent tiles.
# cuBLAS is timed at every shape in the same session for the fraction.
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
timeout "$limit" "$work/argus-bundle/run" argus-agent run examples/agent/gemm_4096.task.json --memory "$mem" --out "$out/run1" --seed 1 2>&1 | tee "$out/run1.log" || true
timeout "$limit" "$work/argus-bundle/run" argus-agent run examples/agent/gemm_2048x8192.task.json --memory "$mem" --out "$out/run2" --seed 2 2>&1 | tee "$out/run2.log" || true
timeout "$limit" "$work/argus-bundle/run" argus-agent run examples/agent/gemm_nt_4096.task.json --memory "$mem" --out "$out/run3" --seed 3 2>&1 | tee "$out/run3.log" || true
python3 - "$out/peer.json" <<'PY'
import json, sys, torch
res = {}
for (m, n, k, nt) in [(4096, 4096, 4096, False), (2048, 8192, 4096, False), (4096, 4096, 4096, True)]:
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, k, device="cuda", dtype=torch.bfloat16).t() if nt else torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
    c = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
    for _ in range(20): torch.matmul(a, b, out=c)
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    ts = []
    for _ in range(50):
        s.record(); torch.matmul(a, b, out=c); e.record(); e.synchronize(); ts.append(s.elapsed_time(e))
    ms = sorted(ts)[len(ts) // 2]
    res[f"{m}x{n}x{k}" + (" A@W^T" if nt else "")] = {"cublas_ms": ms, "cublas_tflops": 2 * m * n * k / ms / 1e9}
json.dump(res, open(sys.argv[1], "w"), indent=1)
print(res)
PY

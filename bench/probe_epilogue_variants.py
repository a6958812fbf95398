#!/usr/bin/env python3
"""A/B probe: variants of examples/gemm_bias_gelu.ag's epilogue side by side, on the GPU,
in one process (bench/results/bench_gpu_epilogue.md, "Where the time goes").

    e=examples/gemm_bias_gelu.ag; s='cast(gelu(acc + b\\[None, :\\]), bf16)'
    sed "s/$s/cast(acc + b[None, :], bf16)/" $e > /tmp/bias_only.ag   # and gelu(acc), acc + 0.5
    build/argusc --arch=sm_90a /tmp/bias_only.ag -o DIR/bias_only.ptx  # ... each variant
    cp build-gpu/ptx/gemm_bias_gelu.* build-gpu/ptx/gemm_nn.* DIR/
    python3 bench/probe_epilogue_variants.py DIR                      # on the GPU machine

Every PTX in DIR is timed at 4096^3 and 4096 x 4096 x 512 (CUDA-graph replays of 10
launches, the middle of 3 rounds, microseconds per launch); gemm_nn takes (A, B, C), the
variants (A, B, bias, C). No correctness check: bench_gpu.py checks the shipped kernel.
"""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import torch  # noqa: E402
import argus  # noqa: E402
from probe_gemm_cluster import graph_ms  # noqa: E402

d = sys.argv[1]
ks = {}
for f in sorted(os.listdir(d)):
    if f.endswith(".ptx"):
        mod = argus.load(os.path.join(d, f))
        ks[f[:-4]] = next(iter(mod.kernels.values()))
for m, n, k in [(4096, 4096, 4096), (4096, 4096, 512)]:
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16) / k ** 0.5
    b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
    bias = torch.randn(n, device="cuda", dtype=torch.bfloat16)
    c = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
    runs = {}
    for name, fn in ks.items():
        runs[name] = (lambda fn=fn: fn(a, b, c)) if name == "gemm_nn" else (lambda fn=fn: fn(a, b, bias, c))
    res = {name: [] for name in runs}
    for _ in range(3):
        for name, run in runs.items():
            res[name].append(graph_ms(run) * 1000)
    print(f"M={m} N={n} K={k} us per launch:", {name: sorted(v)[1] for name, v in res.items()}, flush=True)

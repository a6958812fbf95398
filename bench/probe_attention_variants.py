#!/usr/bin/env python3
"""A/B probe: builds of examples/attention_wgmma_d64.ag with other -D constants (BN,
STAGES, CAUSAL) side by side with cuDNN's SDPA, on the GPU, in one process.

    for bn in 64 128; do for st in 2 3 4; do for c in 0 1; do
      build/argusc --arch=sm_90a examples/attention_wgmma_d64.ag -D BN=$bn -D STAGES=$st -D CAUSAL=$c \
        -o DIR/d64_bn${bn}_s${st}_c${c}.ptx; done; done; done
    python3 bench/probe_attention_variants.py DIR            # on the GPU machine

Each build (DIR/*_c0.ptx non-causal, *_c1.ptx causal) is checked first at ragged sequence
lengths (NaN-poisoned output, float32 reference of the bf16 inputs), then every build and
cuDNN are timed at B=8 H=32 S=2048 D=64 in alternating rounds (CUDA-graph replays of 10
launches, the median of 10 replays per round). Not the benchmark (bench_gpu.py): a
side-by-side of builds, to choose the constants the example ships with.
"""
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))
sys.path.insert(0, os.path.dirname(__file__))
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch.nn.attention import SDPBackend, sdpa_kernel  # noqa: E402
import argus  # noqa: E402
from probe_gemm_cluster import graph_ms  # noqa: E402

D = 64
SCALE_LOG2 = 1.0 / math.sqrt(D) * math.log2(math.e)


def reference(q, k, v, causal):
    return F.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=causal)


def main(folder):
    torch.manual_seed(0)
    builds = {}
    for name in sorted(f for f in os.listdir(folder) if f.endswith(".ptx")):
        fn = argus.load(os.path.join(folder, name))["attention_wgmma"]
        builds[name[:-4]] = (fn, name.endswith("_c1.ptx"))
    failed = set()
    for bh, s in [(3, 200), (2, 1000), (1, 129)]:
        q, k, v = (torch.randn(bh, s, D, device="cuda", dtype=torch.bfloat16) for _ in range(3))
        for name, (fn, causal) in builds.items():
            o = torch.full_like(q, float("nan"))
            fn(q, k, v, o, SCALE_LOG2)
            torch.cuda.synchronize()
            ref = reference(q, k, v, causal)
            err = ((o.float() - ref).norm() / ref.norm()).item()
            ok = err < 1e-2 and not torch.isnan(o).any().item()
            print(f"check {name} BH={bh} S={s}: rel. error {err:.2e} {'ok' if ok else 'FAIL'}", flush=True)
            if not ok:
                failed.add(name)
    builds = {name: build for name, build in builds.items() if name not in failed}
    b, h, s = 8, 32, 2048
    q, k, v = (torch.randn(b, h, s, D, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    o = torch.empty_like(q)
    q3, k3, v3, o3 = (t.view(b * h, s, D) for t in (q, k, v, o))
    for causal in (False, True):
        runs = {name: (lambda fn=fn: fn(q3, k3, v3, o3, SCALE_LOG2))
                for name, (fn, c) in builds.items() if c == causal}

        def cudnn():
            with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
                F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        runs["cudnn"] = cudnn
        flops = 4 * b * h * s * s * D / (2 if causal else 1)
        tflops = {name: [] for name in runs}
        for _ in range(4):
            for name, run in runs.items():
                tflops[name].append(flops / graph_ms(run) / 1e9)
        print(f"B={b} H={h} S={s} D={D} causal={causal} TFLOP/s per round:", flush=True)
        for name, xs in tflops.items():
            print(f"  {name}: {[round(x) for x in xs]} median {sorted(xs)[len(xs) // 2]:.0f}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1])

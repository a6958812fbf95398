#!/usr/bin/env python3
"""A/B probe: examples/gemm_cluster.ag (clusters of two blocks, W's tile multicast)
against examples/gemm_persistent.ag and cuBLAS, on the GPU, in one process.

    bash -c 'build/argusc --arch=sm_90a examples/gemm_persistent.ag -o DIR/gemm_persistent.ptx &&
             build/argusc --arch=sm_90a examples/gemm_cluster.ag -o DIR/gemm_cluster.ptx'
    python3 bench/probe_gemm_cluster.py DIR            # on the GPU machine

Checks both kernels at ragged sizes first (NaN-poisoned output, fp32 reference), then
times each size in alternating rounds: CUDA-graph replays of 10 launches, median of 10
replays per round. Not the benchmark (bench_gpu.py): a side-by-side of two builds.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))
import torch  # noqa: E402
import argus  # noqa: E402


def graph_ms(fn, reps=10, inner=10):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        fn()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(inner):
            fn()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    graph.replay()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start.record()
        graph.replay()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end) / inner)
    return sorted(times)[len(times) // 2]


def main(folder):
    torch.manual_seed(0)
    kernels = {"gemm_persistent": argus.load(os.path.join(folder, "gemm_persistent.ptx"))["gemm_persistent"],
               "gemm_cluster": argus.load(os.path.join(folder, "gemm_cluster.ptx"))["gemm_cluster"]}
    for m, n, k in [(300, 600, 136), (1000, 1000, 520), (129, 257, 64), (1000, 1003, 520), (4096, 4096, 512)]:
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
        ref = a.float() @ w.float().t()
        for name, fn in kernels.items():
            c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
            fn(a, w, c)
            torch.cuda.synchronize()
            err = ((c.float() - ref).norm() / ref.norm()).item()
            ok = err < 8e-3 and not torch.isnan(c).any().item()
            print(f"check {name} M={m} N={n} K={k}: rel. error {err:.2e} {'ok' if ok else 'FAIL'}", flush=True)
            if not ok:
                sys.exit(1)
    for m, n, k in [(4096, 4096, 4096), (8192, 8192, 8192), (4096, 4096, 512)]:
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
        c = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
        runs = {name: (lambda fn=fn: fn(a, w, c)) for name, fn in kernels.items()}
        runs["cublas"] = lambda: torch.matmul(a, w.t(), out=c)
        tflops = {name: [] for name in runs}
        for _ in range(4):
            for name, run in runs.items():
                tflops[name].append(2 * m * n * k / graph_ms(run) / 1e9)
        print(f"M={m} N={n} K={k} TFLOP/s per round:",
              {name: [round(x) for x in xs] for name, xs in tflops.items()}, flush=True)


if __name__ == "__main__":
    main(sys.argv[1])

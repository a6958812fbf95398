"""Checks bench/peer_timing.py against the other two ways of timing a peer, on
the GPU machine: Triton's and torch's bf16 softmax at the agent's softmax
shapes, timed (1) as peer_timing.py does (host launch hidden behind a GPU
spin), (2) with the two events around the Python call (how peer_timing.py
did it before), (3) as CUDA-graph replays (bench_gpu.py's way).
usage: python3 bench/peer_timing_check.py"""
import sys, torch
sys.path.insert(0, "bench")
import triton_rows
from peer_timing import median_ms
from gpu_check import time_graph_ms

def old_median(fn, warmup=20, repeat=30):
    for _ in range(warmup): fn()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    t = []
    for _ in range(repeat):
        s.record(); fn(); e.record(); e.synchronize(); t.append(s.elapsed_time(e))
    return sorted(t)[len(t) // 2]

def graph_ms(fn, replays=40):
    fn()
    torch.cuda.synchronize()
    return time_graph_ms(torch, [None], lambda _: fn(), replays)[0]

print(torch.cuda.get_device_name())
for (m, n) in [(8192, 8192), (16384, 4096)]:
    x = torch.randn(m, n, device="cuda", dtype=torch.bfloat16); y = torch.empty_like(x)
    f = lambda: triton_rows.softmax(x, y)
    print(f"{m}x{n} triton: spin-hidden {median_ms(f):.4f} ms, events-around-python {old_median(f):.4f} ms, graph {graph_ms(f):.4f} ms")
    f2 = lambda: torch.softmax(x, dim=1)
    print(f"{m}x{n} torch: spin-hidden {median_ms(f2):.4f} ms, events-around-python {old_median(f2):.4f} ms")

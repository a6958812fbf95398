"""Times a peer (cuBLAS, Triton, torch) as argus-agent times a candidate:
one launch between two CUDA events, after 20 warm-up launches, the median of
30 (bench/run_agent_gpu.sh).

Each timed launch is queued behind a ~1 ms spin of the GPU (torch.cuda._sleep),
so that the host's launch path (Python, Triton's launcher: 20-60 us a call)
lies inside that spin and not between the two events: the figure is the
peer's GPU time. The agent launches from C++ without that spin, so its few
microseconds of driver call stay in its own figure: the comparison leans
against Argus, never for it. Before this (the softmax run of 2026-12-07,
bench/results/agent/h100_softmax_s28) Triton's softmax read 0.147 ms per launch
where bench_gpu.py's CUDA-graph replays read 0.091 ms."""
import torch

SPIN_CYCLES = 2_000_000  # about 1 ms at Hopper's 1.98 GHz


def median_ms(fn, warmup=20, repeat=30):
    for _ in range(warmup):
        fn()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(repeat):
        torch.cuda._sleep(SPIN_CYCLES)
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    return sorted(times)[len(times) // 2]

"""Times a peer (cuBLAS, Triton, torch) as argus-agent times a candidate:
one launch between two CUDA events, after 20 warm-up launches, the median of
30 (bench/run_agent_gpu.sh)."""
import torch


def median_ms(fn, warmup=20, repeat=30):
    for _ in range(warmup):
        fn()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(repeat):
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    return sorted(times)[len(times) // 2]

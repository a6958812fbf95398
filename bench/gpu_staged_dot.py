#!/usr/bin/env python3
"""Runs argusc's PTX of bench/staged_dot.ag (dot() on tiles the compiler stages through
shared memory) on the GPU at ragged sizes, against torch's float64 product, with the output
poisoned with NaN beforehand. Exit status 1 on any failure.

    argusc bench/staged_dot.ag -o DIR/staged_dot.ptx      (here)
    python3 bench/gpu_staged_dot.py DIR/staged_dot.ptx     (on the GPU machine)
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "python"))


def main():
    import torch
    import argus
    fn = next(iter(argus.load(sys.argv[1]).kernels.values()))
    torch.manual_seed(7)
    failed = 0
    for m, n, k in [(100, 70, 45), (64, 64, 32), (1000, 513, 257), (1, 1, 1)]:
        a = torch.randn(m, k, dtype=torch.float16, device="cuda")
        b = torch.randn(k, n, dtype=torch.float16, device="cuda")
        c = torch.full((m, n), float("nan"), dtype=torch.float32, device="cuda")
        fn(a, b, c)
        torch.cuda.synchronize()
        ref = a.double() @ b.double()
        rel = float(torch.linalg.vector_norm(c.double().nan_to_num(0.0) - ref) / torch.linalg.vector_norm(ref))
        nan = int(torch.isnan(c).sum())
        ok = nan == 0 and rel <= 1e-3
        failed += not ok
        print(f"M={m} N={n} K={k}: rel. error {rel:.2e}, {nan} NaN: {'pass' if ok else 'FAIL'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

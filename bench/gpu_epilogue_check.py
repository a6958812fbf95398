#!/usr/bin/env python3
"""GPU check of an epilogue computed in a dot accumulator's registers: scaling, a bias
row, relu and a residual tile read in the accumulator's own layout (ir/dot_layout.h),
on wgmma (sm_90a) and mma.sync (sm_90). The kernels are the golden files
tests/golden/diagnostics/dot_epilogue_in_registers{,_sm90}.ag:

    build/argusc --arch=sm_90a tests/golden/diagnostics/dot_epilogue_in_registers.ag -o DIR/epilogue_wgmma.ptx
    build/argusc --arch=sm_90 tests/golden/diagnostics/dot_epilogue_in_registers_sm90.ag -o DIR/epilogue_mma.ptx
    python3 bench/gpu_epilogue_check.py DIR            # on the GPU machine

C = bf16(relu(alpha * (A @ B) + bias) + R) against a float64 reference, at ragged sizes,
the output poisoned with NaN first. Exits non-zero on any failure.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))
import torch  # noqa: E402
import argus  # noqa: E402


def main(folder):
    torch.manual_seed(0)
    failures = 0
    for name in ("epilogue_wgmma", "epilogue_mma"):
        fn = argus.load(os.path.join(folder, name + ".ptx"))["linear"]
        for m, n, k in [(128, 128, 64), (300, 600, 136), (1000, 1000, 520), (129, 264, 64)]:
            a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16) / k ** 0.5
            b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
            bias = torch.randn(n, device="cuda", dtype=torch.bfloat16)
            r = torch.randn(m, n, device="cuda", dtype=torch.bfloat16)
            alpha = 0.75
            c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
            fn(a, b, bias, r, c, alpha)
            torch.cuda.synchronize()
            ref = torch.relu(alpha * (a.double() @ b.double()) + bias.double()) + r.double()
            err = ((c.double() - ref).norm() / ref.norm()).item()
            ok = err < 8e-3 and not torch.isnan(c).any().item()
            failures += not ok
            print(f"{name} M={m} N={n} K={k}: rel. error {err:.2e} {'ok' if ok else 'FAIL'}", flush=True)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main(sys.argv[1])

#!/usr/bin/env python3
"""Runs the example kernels (examples/*.ag, compiled to PTX + .meta.json by argusc)
on the GPU, checks them against a torch float64 reference, and times the ones
that pass against their torch equivalents.

    python3 bench/gpu_check.py --ptx-dir build-gpu/ptx [--out-dir DIR] [--quick] [--kernel NAME]

Each kernel runs in its own subprocess, so a kernel that faults (and poisons its
CUDA context) or hangs does not take the others with it. Correctness first:
fresh random inputs at several sizes (ragged ones too), outputs poisoned with NaN
inside a NaN guard band, relative error ||out - ref|| / ||ref|| against float64.
A case is timed only after its check passed; failures are reported plainly.
Writes bench/results/gpu_examples.json and .md (and copies into --out-dir).
"""

import argparse
import datetime
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import time
import traceback

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))

GUARD = 1024  # NaN elements before and after every output, to catch stray stores


# ----------------------------------------------------------------------------- cases

def cases(kernel, quick):
    """(size dict, timed?) per case; sizes include ones that are not tile multiples."""
    if kernel in ("vadd", "gelu"):
        ns = [1, 1000, 1024, 4097, 1_000_003]
        timed = [1 << 20, 1 << 26]
        return [({"N": n}, False) for n in ns] + ([] if quick else [({"N": n}, True) for n in timed])
    if kernel in ("softmax", "layernorm"):
        shapes = [(1, 1), (3, 5), (4, 1024), (37, 1000), (1001, 333), (513, 1023)]
        timed = [(65536, 1024), (100_000, 513)]
        return [({"M": m, "N": n}, False) for m, n in shapes] + \
            ([] if quick else [({"M": m, "N": n}, True) for m, n in timed])
    if kernel == "gemm":
        shapes = [(1, 1, 1), (64, 64, 16), (100, 70, 33), (129, 257, 300), (64, 64, 1000)]
        timed = [(1024, 1024, 1024), (4096, 4096, 4096), (3000, 2000, 1500)]
        return [({"M": m, "N": n, "K": k}, False) for m, n, k in shapes] + \
            ([] if quick else [({"M": m, "N": n, "K": k}, True) for m, n, k in timed])
    raise ValueError(kernel)


THRESHOLDS = {"vadd": 1e-6, "gelu": 1e-5, "softmax": 1e-5, "gemm": 1e-5, "layernorm": 1e-5}


def guarded_output(torch, shape):
    """An output tensor inside a NaN buffer with GUARD elements on each side."""
    numel = math.prod(shape)
    buf = torch.full((numel + 2 * GUARD,), float("nan"), device="cuda", dtype=torch.float32)
    return buf, buf[GUARD:GUARD + numel].view(shape)


class Problem:
    """Inputs, the Argus call, the torch equivalent, the float64 reference, and the
    work counted for throughput (bytes moved or flops)."""

    def __init__(self, torch, kernel, size, gen):
        self.torch, self.kernel, self.size = torch, kernel, size
        t = torch
        randn = lambda *s: t.randn(*s, device="cuda", dtype=t.float32, generator=gen)  # noqa: E731
        if kernel in ("vadd", "gelu"):
            n = size["N"]
            self.inputs = [randn(n), randn(n)]
            self.scale = float(t.empty(1).uniform_(0.5, 2.0).item())
            self.out_shape = (n,)
            self.bytes = 3 * n * 4
        elif kernel == "softmax":
            m, n = size["M"], size["N"]
            self.inputs = [randn(m, n) * 3.0]
            self.out_shape = (m, n)
            self.bytes = 2 * m * n * 4
        elif kernel == "layernorm":
            m, n = size["M"], size["N"]
            # An offset larger than the spread, as activations have: a one-pass variance would show it.
            self.inputs = [randn(m, n) * 3.0 + 5.0, randn(n), randn(n)]
            self.eps = 1e-5
            self.out_shape = (m, n)
            self.bytes = 2 * m * n * 4 + 2 * n * 4
        else:
            m, n, k = size["M"], size["N"], size["K"]
            self.inputs = [randn(m, k), randn(k, n)]
            self.out_shape = (m, n)
            self.flops = 2 * m * n * k

    def argus_args(self, out):
        if self.kernel == "gelu":
            return [self.inputs[0], self.inputs[1], out, self.scale]
        if self.kernel == "layernorm":
            return list(self.inputs) + [out, self.eps]
        return list(self.inputs) + [out]

    def run_argus(self, fn, out):
        fn(*self.argus_args(out))

    def run_torch(self, out):
        t, x = self.torch, self.inputs
        if self.kernel == "vadd":
            t.add(x[0], x[1], out=out)
        elif self.kernel == "gelu":
            t.nn.functional.gelu(t.add(x[1], x[0], alpha=self.scale))
        elif self.kernel == "softmax":
            t.softmax(x[0], dim=1)
        elif self.kernel == "layernorm":
            t.nn.functional.layer_norm(x[0], (x[0].shape[1],), x[1], x[2], self.eps)
        else:
            t.mm(x[0], x[1], out=out)

    def reference(self):
        t, x = self.torch, [v.double() for v in self.inputs]
        if self.kernel == "vadd":
            return x[0] + x[1]
        if self.kernel == "gelu":
            v = x[0] * self.scale + x[1]
            return 0.5 * v * (1.0 + t.erf(v * 0.7071067811865476))
        if self.kernel == "softmax":
            return t.softmax(x[0], dim=1)
        if self.kernel == "layernorm":
            return t.nn.functional.layer_norm(x[0], (x[0].shape[1],), x[1], x[2], self.eps)
        return x[0] @ x[1]

    def throughput(self, ms):
        if self.kernel == "gemm":
            return self.flops / (ms * 1e-3) / 1e12, "TFLOP/s"
        return self.bytes / (ms * 1e-3) / 1e9, "GB/s"


def time_ms(torch, problems, run, runs, warmup=5):
    """Median milliseconds of `run(problem)` over `runs` launches, rotating among
    the input sets, each launch between its own pair of CUDA events."""
    for i in range(warmup):
        run(problems[i % len(problems)])
    torch.cuda.synchronize()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(runs)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(runs)]
    for i in range(runs):
        p = problems[i % len(problems)]
        starts[i].record()
        run(p)
        ends[i].record()
    torch.cuda.synchronize()
    times = [s.elapsed_time(e) for s, e in zip(starts, ends)]
    return statistics.median(times), min(times), max(times)


def time_graph_ms(torch, problems, run, replays):
    """Median milliseconds per launch when one launch per input set is captured in
    a CUDA graph and the graph is replayed: the GPU's time without the host's
    per-call overhead (Python argument checks, torch dispatch)."""
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for p in problems:
            run(p)
    g.replay()
    torch.cuda.synchronize()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(replays)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(replays)]
    for i in range(replays):
        starts[i].record()
        g.replay()
        ends[i].record()
    torch.cuda.synchronize()
    times = [s.elapsed_time(e) / len(problems) for s, e in zip(starts, ends)]
    return statistics.median(times), min(times), max(times)


def host_us_per_call(fn, problem, calls=2000):
    """Microseconds the Python launcher spends checking one call (no launch)."""
    args = problem.argus_args(problem.out)
    start = time.perf_counter()
    for _ in range(calls):
        fn.plan(*args)
    return (time.perf_counter() - start) / calls * 1e6


def size_text(size):
    return " ".join(f"{k}={v}" for k, v in size.items())


def check_case(torch, fn, kernel, size, gen):
    """Returns (record, problem) with the correctness verdict of one fresh input."""
    p = Problem(torch, kernel, size, gen)
    buf, out = guarded_output(torch, p.out_shape)
    p.run_argus(fn, out)
    torch.cuda.synchronize()
    ref = p.reference()
    o = out.double()
    nan = int(torch.isnan(out).sum().item())
    guard_ok = bool(torch.isnan(buf[:GUARD]).all().item() and torch.isnan(buf[GUARD + out.numel():]).all().item())
    finite = torch.nan_to_num(o, nan=0.0)
    ref_norm = float(torch.linalg.vector_norm(ref).item())
    rel = float(torch.linalg.vector_norm(finite - ref).item()) / ref_norm if ref_norm > 0 else float("inf")
    max_abs = float((finite - ref).abs().max().item()) if ref.numel() else 0.0
    passed = nan == 0 and guard_ok and rel <= THRESHOLDS[kernel]
    record = {"kernel": kernel, "size": size, "size_text": size_text(size), "rel_error": rel,
              "max_abs_error": max_abs, "nan_count": nan, "guard_intact": guard_ok,
              "threshold": THRESHOLDS[kernel], "passed": passed}
    if not passed:
        why = []
        if nan:
            why.append(f"{nan} of {out.numel()} outputs NaN (unwritten or NaN-producing)")
        if not guard_ok:
            why.append("wrote outside the output tensor (guard band changed)")
        if rel > THRESHOLDS[kernel]:
            bad = (finite - ref).abs() > 1e-3 * (ref.abs() + 1e-3)
            idx = bad.nonzero()[:5].tolist()
            why.append(f"rel. error {rel:.3e} > {THRESHOLDS[kernel]:g}; first bad indices {idx}")
        record["failure"] = "; ".join(why)
        if out.numel() <= 64:
            record["out"] = out.flatten().tolist()
            record["ref"] = ref.flatten().tolist()
    return record, p


def worker(args):
    import torch
    import argus
    kernel = args.worker
    result = {"kernel": kernel, "cases": []}
    ptx = os.path.join(args.ptx_dir, f"{kernel}.ptx")
    try:
        mod = argus.load(ptx)
        name = "scale_bias_gelu" if kernel == "gelu" else kernel
        fn = mod.kernels[name] if name in mod.kernels else next(iter(mod.kernels.values()))
        result["attributes"] = fn.attributes
        result["grid_text"] = fn.spec.grid_text
        result["threads"] = fn.spec.threads
    except Exception as e:  # noqa: BLE001 -- reported, not hidden
        result["load_error"] = f"{type(e).__name__}: {e}"
        return result
    gen = torch.Generator(device="cuda")
    gen.manual_seed(1234)
    torch.manual_seed(1234)
    for size, timed in cases(kernel, args.quick):
        try:
            record, _ = check_case(torch, fn, kernel, size, gen)
            # A second fresh input: the same function on any valid input.
            if record["passed"]:
                again, _ = check_case(torch, fn, kernel, size, gen)
                record["rel_error"] = max(record["rel_error"], again["rel_error"])
                if not again["passed"]:
                    record.update(passed=False, failure="second input: " + again.get("failure", "?"))
        except Exception as e:  # noqa: BLE001
            record = {"kernel": kernel, "size": size, "size_text": size_text(size), "passed": False,
                      "failure": f"{type(e).__name__}: {e}", "traceback": traceback.format_exc()}
            result["cases"].append(record)
            if isinstance(e, argus.CudaError) or "CUDA" in str(e):
                result["aborted"] = "a CUDA error ends this kernel's run (the context may be unusable)"
                break
            continue
        if record["passed"] and (timed or not args.quick):
            try:
                sets = [Problem(torch, kernel, size, gen) for _ in range(4)]
                for s in sets:
                    s.out = guarded_output(torch, s.out_shape)[1]
                    s.torch_out = torch.empty(s.out_shape, device="cuda", dtype=torch.float32)
                heavy = kernel == "gemm" and size["M"] * size["N"] * size["K"] >= 1 << 30
                runs = 50 if heavy else 100
                a = time_ms(torch, sets, lambda s: s.run_argus(fn, s.out), runs)
                # The timed launches must still be right: re-check every output set.
                worst = 0.0
                for s in sets:
                    ref = s.reference()
                    worst = max(worst, float(torch.linalg.vector_norm(s.out.double() - ref).item() /
                                             torch.linalg.vector_norm(ref).item()))
                record["rel_error_after_timing"] = worst
                if not worst <= THRESHOLDS[kernel]:
                    record.update(passed=False, failure=f"wrong after timing: rel. error {worst:.3e}")
                else:
                    t = time_ms(torch, sets, lambda s: s.run_torch(s.torch_out), runs)
                    record["argus_eager_ms"], record["argus_eager_ms_min"], record["argus_eager_ms_max"] = a
                    record["torch_eager_ms"], record["torch_eager_ms_min"], record["torch_eager_ms_max"] = t
                    record["runs"] = runs
                    record["argus_host_us"] = host_us_per_call(fn, sets[0])
                    try:
                        ga = time_graph_ms(torch, sets, lambda s: s.run_argus(fn, s.out), runs)
                        gt = time_graph_ms(torch, sets, lambda s: s.run_torch(s.torch_out), runs)
                        worst = max(float(torch.linalg.vector_norm(s.out.double() - s.reference()).item() /
                                          torch.linalg.vector_norm(s.reference()).item()) for s in sets)
                        record["rel_error_after_graph"] = worst
                        if not worst <= THRESHOLDS[kernel]:
                            raise RuntimeError(f"wrong after graph replay: rel. error {worst:.3e}")
                        record["timing"] = "graph"
                    except Exception as e:  # noqa: BLE001 -- fall back to the eager numbers
                        record["graph_error"] = f"{type(e).__name__}: {e}"
                        ga, gt = a, t
                        record["timing"] = "eager"
                    record["argus_ms"], record["argus_ms_min"], record["argus_ms_max"] = ga
                    record["torch_ms"], record["torch_ms_min"], record["torch_ms_max"] = gt
                    record["argus_rate"], record["rate_unit"] = sets[0].throughput(ga[0])
                    record["torch_rate"], _ = sets[0].throughput(gt[0])
                del sets
            except Exception as e:  # noqa: BLE001
                record["timing_error"] = f"{type(e).__name__}: {e}"
        result["cases"].append(record)
        torch.cuda.empty_cache()
    return result


# ----------------------------------------------------------------------------- driver

def environment():
    env = {"python": platform.python_version(), "host": platform.node()}
    try:
        import torch
        env["torch"] = torch.__version__
        env["cuda_runtime"] = torch.version.cuda
        if torch.cuda.is_available():
            env["gpu"] = torch.cuda.get_device_name()
            env["tf32_matmul"] = torch.backends.cuda.matmul.allow_tf32
    except Exception as e:  # noqa: BLE001
        env["torch_error"] = str(e)
    try:
        env["driver"] = subprocess.run(["nvidia-smi", "--query-gpu=driver_version,clocks.sm,clocks.mem",
                                        "--format=csv,noheader"], capture_output=True, text=True,
                                       timeout=20).stdout.strip()
    except Exception:  # noqa: BLE001
        pass
    return env


def fmt(v, spec):
    return "-" if v is None else format(v, spec)


def table(results):
    rows = [("kernel", "size", "rel.err", "pass", "argus ms", "torch ms", "argus rate", "torch rate",
             "argus eager ms", "torch eager ms")]
    for r in results:
        if "load_error" in r:
            rows.append((r["kernel"], "-", "-", "LOAD FAILED", "-", "-", "-", "-", "-", "-"))
            continue
        for c in r["cases"]:
            unit = c.get("rate_unit", "")
            rows.append((c["kernel"], c["size_text"], fmt(c.get("rel_error"), ".2e"),
                         "yes" if c["passed"] else "FAIL", fmt(c.get("argus_ms"), ".4f"),
                         fmt(c.get("torch_ms"), ".4f"),
                         f"{c['argus_rate']:.1f} {unit}" if "argus_rate" in c else "-",
                         f"{c['torch_rate']:.1f} {unit}" if "torch_rate" in c else "-",
                         fmt(c.get("argus_eager_ms"), ".4f"), fmt(c.get("torch_eager_ms"), ".4f")))
    widths = [max(len(str(row[i])) for row in rows) for i in range(len(rows[0]))]
    lines = ["| " + " | ".join(str(v).ljust(w) for v, w in zip(row, widths)) + " |" for row in rows]
    lines.insert(1, "|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return "\n".join(lines)


def failures(results):
    out = []
    for r in results:
        if "load_error" in r:
            out.append(f"{r['kernel']}: could not load: {r['load_error']}")
        if "worker_error" in r:
            out.append(f"{r['kernel']}: {r['worker_error']}")
        if "aborted" in r:
            out.append(f"{r['kernel']}: {r['aborted']}")
        for c in r.get("cases", []):
            if not c["passed"]:
                out.append(f"{c['kernel']} {c['size_text']}: {c.get('failure', '?')}")
            if "graph_error" in c:
                out.append(f"{c['kernel']} {c['size_text']}: graph timing failed, eager numbers used: {c['graph_error']}")
            if "timing_error" in c:
                out.append(f"{c['kernel']} {c['size_text']}: timing failed: {c['timing_error']}")
    return out


def markdown(doc):
    lines = ["# Argus example kernels on the GPU", "",
             f"- date: {doc['date']}", f"- command: `{doc['command']}`",
             f"- machine: {doc['environment'].get('gpu', '?')}, driver {doc['environment'].get('driver', '?')}, "
             f"torch {doc['environment'].get('torch', '?')} (CUDA {doc['environment'].get('cuda_runtime', '?')}), "
             f"torch fp32 matmul TF32: {doc['environment'].get('tf32_matmul', '?')}",
             "- method: fresh random normal inputs per check (two per size), output poisoned with NaN inside a "
             f"{GUARD}-element NaN guard band on each side; rel. error = ||out - ref|| / ||ref|| against torch "
             "float64; timing only after the check passed (and re-checked after timing), rotating among 4 fresh input "
             "sets. 'argus ms' / 'torch ms': one launch per input set captured in a CUDA graph, median over 100 "
             "replays (50 for the largest GEMMs) timed with CUDA events, divided by 4: the GPU time without host "
             "overhead. 'eager ms': 5 warm-ups, then the median of 100 (50) single calls from Python, each between "
             "CUDA events: at small sizes this is the host's per-call cost (the Argus launcher checks arguments in "
             "Python; 'argus host us' in the JSON is that check alone). Torch equivalents: "
             "vadd torch.add(out=), gelu F.gelu(torch.add(b, x, alpha=s)) (2 kernels), softmax torch.softmax, "
             "gemm torch.mm(out=) in fp32, layernorm F.layer_norm (eps 1e-5). GB/s counts each input read once and the output written once.",
             "", table(doc["results"]), ""]
    fails = failures(doc["results"])
    lines += ["## Failures", ""] + ([f"- {f}" for f in fails] if fails else ["none"]) + [""]
    lines += ["## Kernel resources (cuFuncGetAttribute)", "",
              "| kernel | grid | threads | registers | static smem B | local B |", "|---|---|---|---|---|---|"]
    for r in doc["results"]:
        a = r.get("attributes", {})
        lines.append(f"| {r['kernel']} | {', '.join(r.get('grid_text', []))} | {r.get('threads', '-')} | "
                     f"{a.get('num_regs', '-')} | {a.get('shared_size_bytes', '-')} | {a.get('local_size_bytes', '-')} |")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ptx-dir", required=True, help="folder with <kernel>.ptx and <kernel>.meta.json")
    ap.add_argument("--out-dir", help="also copy the results here")
    ap.add_argument("--kernel", action="append", help="only this kernel (repeatable)")
    ap.add_argument("--quick", action="store_true", help="correctness only, small sizes")
    ap.add_argument("--timeout", type=float, default=240, help="seconds per kernel")
    ap.add_argument("--results-name", default="gpu_examples")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--worker-out", help=argparse.SUPPRESS)
    args = ap.parse_args()

    if args.worker:
        result = worker(args)
        with open(args.worker_out, "w") as f:
            json.dump(result, f)
        return 0

    kernels = args.kernel or ["vadd", "gelu", "softmax", "gemm", "layernorm"]
    results = []
    scratch = os.path.join(args.out_dir or "/tmp", ".gpu_check_parts")
    os.makedirs(scratch, exist_ok=True)
    for k in kernels:
        part = os.path.join(scratch, f"{k}.json")
        cmd = [sys.executable, os.path.abspath(__file__), "--ptx-dir", args.ptx_dir, "--worker", k,
               "--worker-out", part] + (["--quick"] if args.quick else [])
        started = time.time()
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
            if proc.returncode == 0 and os.path.exists(part):
                with open(part) as f:
                    res = json.load(f)
            else:
                res = {"kernel": k, "cases": [], "worker_error":
                       f"worker exited with {proc.returncode}: {proc.stderr[-2000:]}"}
        except subprocess.TimeoutExpired:
            res = {"kernel": k, "cases": [], "worker_error": f"timed out after {args.timeout:.0f} s (hang?)"}
        res["seconds"] = round(time.time() - started, 1)
        results.append(res)
        print(f"{k}: {sum(c['passed'] for c in res.get('cases', []))}/{len(res.get('cases', []))} cases "
              f"passed ({res['seconds']} s)", flush=True)
        if os.path.exists(part):
            os.remove(part)
    try:
        os.rmdir(scratch)
    except OSError:
        pass

    doc = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
           "command": "python3 " + " ".join([os.path.relpath(os.path.abspath(__file__), os.getcwd())] + sys.argv[1:]),
           "environment": environment(), "results": results,
           "all_passed": not failures(results)}
    text_md = markdown(doc)
    targets = [os.path.join(ROOT, "bench", "results")] + ([args.out_dir] if args.out_dir else [])
    for d in targets:
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, f"{args.results_name}.json"), "w") as f:
            json.dump(doc, f, indent=1)
        with open(os.path.join(d, f"{args.results_name}.md"), "w") as f:
            f.write(text_md)
    print()
    print(table(results))
    fails = failures(results)
    print("\nFAILURES:\n" + "\n".join("  " + f for f in fails) if fails else "\nall cases passed")
    return 0 if not fails else 1


if __name__ == "__main__":
    sys.exit(main())

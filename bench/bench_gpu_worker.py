"""The GPU side of bench_gpu.py: one worker process per group ("argus:gemm",
"peers:gemm", "argus:gemm_nt", "peers:gemm_nt", "argus:gemm_nn", "peers:gemm_nn",
"argus:gemm_epilogue", "peers:gemm_epilogue", "argus:moe", "peers:moe",
"argus:attention", "peers:attention", and the row kernels' groups). Checks every
implementation of the group first, then times those whose checks all passed;
returns plain records (see bench_gpu.py for the method)."""

import math
import os
import statistics
import traceback

from bench_bindings import Unsupported
import bench_gpu as plan

GUARD = 4096  # NaN elements before and after each checked output, to catch stray stores
SETS = 4      # input sets rotated through while timing


def thresholds(workload, out_dtype):
    """Relative-error bounds (METHOD.md): fp32 accumulation of exact bf16 products is far
    under 1e-4; rounding the output to bf16 alone gives ~1e-3; attention also rounds P.
    gemm_epilogue has the GEMMs' bound: torch's unfused path rounds twice (A @ B + bias to
    bf16, then the GELU's output), about 2e-3."""
    if plan.is_gemm(workload) or workload == "moe":
        return 1e-4 if out_dtype == "f32" else 8e-3
    return 1e-2  # attention; row kernels: float32 math, the bf16 output's rounding (~1e-3)


class Problem:
    """One fresh random input set, with its reference computed on first use. GEMM:
    a (M, K) and b (K, N); for gemm_nt, w (N, K) is the data and b = w.t() its
    strided (K, N) view, so that C = a @ b is the same product for every peer;
    gemm_epilogue adds bias (N,) and draws a with standard deviation 1/sqrt(K). MoE:
    x (T_pad, K), w (E, N, K), block_expert (T_pad / BM,) i32 in the layout of
    plan.moe_layout (the same routing for every input set of a size); only the rows of
    real token-expert pairs (`rows`) are checked."""

    def __init__(self, torch, workload, size, gen):
        self.torch, self.workload, self.size = torch, workload, size
        bf16 = torch.bfloat16
        if workload in ("gemm", "gemm_nn"):
            m, n, k = size
            self.a = torch.randn(m, k, device="cuda", dtype=bf16, generator=gen)
            self.b = torch.randn(k, n, device="cuda", dtype=bf16, generator=gen)
            self.out_shape = (m, n)
        elif workload == "gemm_nt":
            m, n, k = size
            self.a = torch.randn(m, k, device="cuda", dtype=bf16, generator=gen)
            self.w = torch.randn(n, k, device="cuda", dtype=bf16, generator=gen)
            self.b = self.w.t()
            self.out_shape = (m, n)
        elif workload == "gemm_epilogue":
            m, n, k = size
            # Unit-variance A would make A @ B ~ N(0, K): nearly every output would sit where
            # gelu(x) is x or 0 and the erf would go unchecked. Scaled, A @ B + bias ~ N(0, 2).
            self.a = torch.randn(m, k, device="cuda", dtype=bf16, generator=gen) * (1.0 / math.sqrt(k))
            self.b = torch.randn(k, n, device="cuda", dtype=bf16, generator=gen)
            self.bias = torch.randn(n, device="cuda", dtype=bf16, generator=gen)
            self.out_shape = (m, n)
        elif plan.is_row(workload):
            m, n, skew = size
            # skew 1: X starts 2 bytes past a 16-byte boundary (a view into a larger buffer).
            flat = torch.randn(m * n + skew, device="cuda", dtype=bf16, generator=gen)
            self.x = flat[skew:].view(m, n)
            self.w = 1.0 + 0.5 * torch.randn(n, device="cuda", dtype=bf16, generator=gen)
            self.b = 0.5 * torch.randn(n, device="cuda", dtype=bf16, generator=gen)
            self.eps = 1e-5
            self.out_shape = (m, n)
        elif workload == "moe":
            experts, _, _, n, k, _, _ = size
            self.layout = layout = plan.moe_layout(size)
            self.x = torch.randn(layout.t_pad, k, device="cuda", dtype=bf16, generator=gen)
            self.w = torch.randn(experts, n, k, device="cuda", dtype=bf16, generator=gen)
            self.block_expert = torch.tensor(layout.block_expert, device="cuda", dtype=torch.int32)
            self.rows = torch.tensor([first + i for _, first, count in layout.segments for i in range(count)],
                                     device="cuda", dtype=torch.int64)
            self.out_shape = (layout.t_pad, n)
        else:
            b, h, s, d, _ = size
            self.q, self.k, self.v = (torch.randn(b, h, s, d, device="cuda", dtype=bf16, generator=gen)
                                      for _ in range(3))
            self.out_shape = (b, h, s, d)
        self._ref = None

    def reference(self):
        if self._ref is not None:
            return self._ref
        t = self.torch
        if plan.is_row(self.workload):  # float32 on the upcast bf16 inputs
            n = self.size[1]
            x, w, b = self.x.float(), self.w.float(), self.b.float()
            f = t.nn.functional
            if self.workload == "softmax":
                self._ref = t.softmax(x, dim=-1)
            elif self.workload == "layernorm":
                self._ref = f.layer_norm(x, (n,), w, b, self.eps)
            else:
                self._ref = x * t.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + self.eps) * w
            return self._ref
        if self.workload == "moe":  # float64, one expert at a time, the real rows only
            parts = [self.x[first:first + count].double() @ self.w[e].double().t()
                     for e, first, count in self.layout.segments]
            self._ref = t.cat(parts)
            return self._ref
        if self.workload == "gemm_epilogue":  # float64, torch's exact (erf) GELU
            self._ref = t.nn.functional.gelu(self.a.double() @ self.b.double() + self.bias.double())
            return self._ref
        if plan.is_gemm(self.workload):
            self._ref = self.a.double() @ self.b.double()
            return self._ref
        b, h, s, d, causal = self.size
        q, k, v = (x.reshape(b * h, s, d) for x in (self.q, self.k, self.v))
        out = t.empty(b * h, s, d, device="cuda", dtype=t.float32)
        chunk = max(1, (1 << 28) // (s * s))  # at most 1 GiB of f32 scores at a time
        mask = t.triu(t.ones(s, s, device="cuda", dtype=t.bool), 1) if causal else None
        for i in range(0, b * h, chunk):
            sc = t.bmm(q[i:i + chunk].float(), k[i:i + chunk].float().transpose(1, 2)) / math.sqrt(d)
            if mask is not None:
                sc.masked_fill_(mask, float("-inf"))
            out[i:i + chunk] = t.bmm(t.softmax(sc, dim=-1), v[i:i + chunk].float())
            del sc
        self._ref = out.view(b, h, s, d)
        return self._ref

    def checked(self, out):
        """The part of an output the reference describes: for MoE the rows of real
        token-expert pairs (padding rows are don't-care); else all of it."""
        return out.index_select(0, self.rows) if self.workload == "moe" else out


def relative_error(torch, out, ref):
    nref = float(torch.linalg.vector_norm(ref, dtype=torch.float64).item())
    diff = torch.nan_to_num(out.to(ref.dtype), nan=0.0) - ref
    ndiff = float(torch.linalg.vector_norm(diff, dtype=torch.float64).item())
    return ndiff / nref if nref > 0 else (0.0 if ndiff == 0 else float("inf"))


# ----------------------------------------------------------------------------- implementations

class Impl:
    """run(problem, out) computes into `out` or returns a new tensor with the result."""
    name = "?"
    out_dtype = "bf16"
    status = None  # None: usable; else the text every row shows ("not built", "load failed")
    note = None

    def supports(self, size):  # raises Unsupported
        pass


def launch(fn, args):
    """An argument the kernel's launch requirements reject is an n/a case, not a failure."""
    import argus
    try:
        fn.plan(*args)
    except argus.ArgumentError as e:
        raise Unsupported(str(e)) from None
    fn(*args)


class ArgusGemm(Impl):
    name = "argus"

    def __init__(self, torch, argus, specs):
        self.torch = torch
        # The first kernel that was built (gemm_nt: the persistent one, else gemm_wgmma).
        path, binding, status = next((s for s in specs if s[1] is not None), specs[0])
        if binding is None:
            self.status = status
            return
        self.binding, self.out_dtype = binding, binding.out_dtype
        try:
            self.fn = argus.load(path)[binding.spec.name]
            self.note = f"{binding.describe()}; registers {self.fn.attributes['num_regs']}, " \
                        f"local {self.fn.attributes['local_size_bytes']} B"
        except Exception as e:  # noqa: BLE001 -- shown in every row
            self.status, self.note = "load failed", f"{type(e).__name__}: {e}"

    def supports(self, size):
        self.binding.check_shape(*size)

    def run(self, p, out):
        bias = p.bias if self.binding.bias is not None else None
        launch(self.fn, self.binding.args(p.a, p.w if self.binding.transposed_b else p.b, out, bias))
        return out


class ArgusKernels(Impl):
    """Every built Argus kernel of a workload (attention's variants, MoE's builds); the
    subclass picks the one that takes a case."""
    name = "argus"

    def __init__(self, torch, argus, specs):
        self.torch, self.kernels, notes = torch, [], []
        for path, binding, status in specs:
            if binding is None:
                continue
            try:
                fn = argus.load(path)[binding.spec.name]
                self.kernels.append((binding, fn))
                notes.append(f"{os.path.basename(path)}: {binding.describe()}; registers "
                             f"{fn.attributes['num_regs']}, local {fn.attributes['local_size_bytes']} B")
            except Exception as e:  # noqa: BLE001
                self.status = "load failed"
                notes.append(f"{os.path.basename(path)}: {type(e).__name__}: {e}")
        if not self.kernels and self.status is None:
            self.status = "not built"
        self.note = "; ".join(notes) or None
        if self.kernels:
            self.out_dtype = self.kernels[0][0].out_dtype


class ArgusAttention(ArgusKernels):
    def pick(self, size):
        b, h, s, d, causal = size
        why = f"no attention*.ptx build for {'causal' if causal else 'non-causal'} D={d}"
        for binding, fn in self.kernels:
            try:
                binding.check_shape(b, h, s, d, causal)
                return binding, fn
            except Unsupported as e:
                why = str(e)
        raise Unsupported(why)

    def supports(self, size):
        self.pick(size)

    def run(self, p, out):
        b, h, s, d, causal = p.size
        binding, fn = self.pick(p.size)
        shape = binding.shape_for(b, h, s, d)
        t = self.torch
        extra = {name: t.empty(shp, device="cuda", dtype=getattr(t, {"f32": "float32", "bf16": "bfloat16",
                                                                        "f16": "float16"}.get(dt, "float32")))
                 for name, (shp, dt) in binding.extra_shapes(b, h, s, d).items()}
        launch(fn, binding.args(p.q.view(shape), p.k.view(shape), p.v.view(shape), out.view(shape), extra, d, causal))
        return out


class ArgusMoe(ArgusKernels):
    """moe_gemm; each case runs on the build whose BM is the case's padding."""

    def pick(self, size):
        why = None
        for binding, fn in self.kernels:
            try:
                binding.check_shape(*size)
                return binding, fn
            except Unsupported as e:  # the reason of the build with the case's BM is the one to show
                if why is None or binding.block_rows == size[5]:
                    why = str(e)
        raise Unsupported(why or f"no moe_gemm*.ptx build for BM={size[5]}")

    def supports(self, size):
        self.pick(size)

    def run(self, p, out):
        binding, fn = self.pick(p.size)
        launch(fn, binding.args(p.x, p.w, p.block_expert, out))
        return out


class ArgusRows(Impl):
    """Every build of a row kernel (bench_gpu.load_specs): a case runs on the builds whose
    BLOCK is the smallest that holds its rows; each is checked, and the fastest is timed."""
    name = "argus"

    def __init__(self, torch, argus, specs, name="argus"):
        self.name = name
        self.torch, self.kernels, self.chosen, notes = torch, [], {}, []
        for path, binding, status in specs:
            if binding is None:
                continue
            try:
                fn = argus.load(path)[binding.spec.name]
                self.kernels.append((binding, fn))
                notes.append(f"{os.path.basename(path)}: {binding.config()}; registers {fn.attributes['num_regs']}, "
                             f"local {fn.attributes['local_size_bytes']} B")
            except Exception as e:  # noqa: BLE001
                self.status = "load failed"
                notes.append(f"{os.path.basename(path)}: {type(e).__name__}: {e}")
        if not self.kernels and self.status is None:
            self.status = "not built"
        self.note = "; ".join(notes) or None

    def variants(self, size):
        fits = [k for k in self.kernels if k[0].block is None or k[0].block >= size[1]]
        if not fits:
            raise Unsupported(f"no build with BLOCK >= N = {size[1]}")
        smallest = min(k[0].block or 0 for k in fits)
        return [k for k in fits if (k[0].block or 0) == smallest]

    def supports(self, size):
        self.variants(size)

    def use(self, size, variant):
        self.chosen[tuple(size)] = variant

    def run(self, p, out):
        binding, fn = self.chosen.get(tuple(p.size)) or self.variants(p.size)[0]
        launch(fn, binding.args(p.x, out, p.w, p.b, p.eps))
        return out

    def config(self, size):
        binding, _ = self.chosen.get(tuple(size)) or self.variants(size)[0]
        return binding.config()


class TritonRows(Impl):
    name = "triton"

    def __init__(self, torch, workload):
        self.workload = workload
        try:
            import triton_rows
            self.mod = triton_rows
        except Exception as e:  # noqa: BLE001
            self.status, self.note = "load failed", f"{type(e).__name__}: {e}"

    def run(self, p, out):
        if self.workload == "softmax":
            return self.mod.softmax(p.x, out)
        if self.workload == "layernorm":
            return self.mod.layernorm(p.x, p.w, p.b, out, p.eps)
        return self.mod.rmsnorm(p.x, p.w, out, p.eps)

    def config(self, size):
        return self.mod.best_config(self.workload, size[1])


class TorchRows(Impl):
    name = "torch"

    def __init__(self, torch, workload):
        self.torch, self.workload = torch, workload
        if workload == "rmsnorm" and not hasattr(torch.nn.functional, "rms_norm"):
            self.status = "n/a: this torch has no F.rms_norm"

    def run(self, p, out):
        f = self.torch.nn.functional
        n = p.size[1]
        if self.workload == "softmax":
            return f.softmax(p.x, dim=-1)
        if self.workload == "layernorm":
            return f.layer_norm(p.x, (n,), p.w, p.b, p.eps)
        return f.rms_norm(p.x, (n,), p.w, p.eps)


class TorchMoeLoop(Impl):
    """The straightforward torch way: one cuBLAS GEMM per expert that has rows, over its
    unpadded segment, written in place into Y (padding rows are left alone)."""
    name = "torch_loop"

    def __init__(self, torch):
        self.torch = torch

    def run(self, p, out):
        for e, first, count in p.layout.segments:
            self.torch.matmul(p.x[first:first + count], p.w[e].t(), out=out[first:first + count])
        return out


class TritonMoe(Impl):
    name = "triton"

    def __init__(self, torch):
        try:
            import triton_moe
            self.mod = triton_moe
        except Exception as e:  # noqa: BLE001
            self.status, self.note = "load failed", f"{type(e).__name__}: {e}"

    def run(self, p, out):
        return self.mod.moe_gemm(p.x, p.w, p.block_expert, out, p.size[5])

    def config(self, size):
        return self.mod.best_config(*size)


class Cublas(Impl):
    name = "cublas"

    def __init__(self, torch):
        self.torch = torch

    def run(self, p, out):
        return self.torch.matmul(p.a, p.b, out=out)


class TorchAddmmGelu(Impl):
    """C = gelu(A @ B + bias) unfused, as nn.Linear then F.gelu run it: addmm (cuBLAS, the
    bias added in its epilogue) writes A @ B + bias in bf16, a second kernel the GELU."""
    name = "torch_unfused"

    def __init__(self, torch):
        self.torch = torch

    def run(self, p, out):
        return self.torch.nn.functional.gelu(self.torch.addmm(p.bias, p.a, p.b))


class CublasF32(Impl):
    name, out_dtype = "cublas_f32", "f32"

    def __init__(self, torch):
        self.torch = torch

    def run(self, p, out):
        try:
            return self.torch.mm(p.a, p.b, out_dtype=self.torch.float32)
        except TypeError as e:
            raise Unsupported(f"this torch has no mm(out_dtype=): {e}") from None


class Triton(Impl):
    name = "triton"

    def __init__(self, torch, out_dtype):
        self.out_dtype = out_dtype
        try:
            import triton_gemm
            self.mod = triton_gemm
        except Exception as e:  # noqa: BLE001
            self.status, self.note = "load failed", f"{type(e).__name__}: {e}"

    def run(self, p, out):
        return self.mod.matmul(p.a, p.b, out)

    def config(self, size):
        return self.mod.best_config(*size)


class TritonMmaSync(Triton):
    """Triton's Ampere path (mma.sync, cp.async) built for this GPU: the peer of gemm_tc's
    sm_80-style code, where cuBLAS and plain Triton use wgmma."""
    name = "triton_mma"

    def run(self, p, out):
        return self.mod.matmul_mma_sync(p.a, p.b, out)

    def config(self, size):
        return self.mod.best_config_mma_sync(*size)


class TritonFused(Triton):
    """The Triton GEMM with the bias and the exact GELU fused into its epilogue, as Argus's."""
    name = "triton_fused"

    def run(self, p, out):
        return self.mod.matmul_bias_gelu(p.a, p.b, p.bias, out)

    def config(self, size):
        return self.mod.best_config_bias_gelu(*size)


class Sdpa(Impl):
    def __init__(self, torch, name, backend):
        from torch.nn.attention import SDPBackend, sdpa_kernel
        self.torch, self.name, self.sdpa_kernel = torch, name, sdpa_kernel
        self.backend = getattr(SDPBackend, backend)

    def run(self, p, out):
        with self.sdpa_kernel(self.backend):
            try:
                return self.torch.nn.functional.scaled_dot_product_attention(p.q, p.k, p.v, is_causal=p.size[4])
            except RuntimeError as e:
                if "No available kernel" in str(e):
                    raise Unsupported(str(e).splitlines()[0]) from None
                raise


def make_impls(torch, group, ptx_dir):
    kind, workload = group.split(":")
    specs = plan.load_specs(ptx_dir, workload)
    if plan.is_row(workload):
        if kind == "argus":
            import argus
            impls = [ArgusRows(torch, argus, specs)]
            for tag in plan.ROW_TAGS:
                tagged = plan.load_specs(ptx_dir, workload, tag=tag)
                if tagged:
                    impls.append(ArgusRows(torch, argus, tagged, "argus_" + tag))
            return impls
        return [TritonRows(torch, workload), TorchRows(torch, workload)]
    if kind == "argus":
        import argus
        if workload == "moe":
            return [ArgusMoe(torch, argus, specs)]
        return [ArgusGemm(torch, argus, specs) if plan.is_gemm(workload) else ArgusAttention(torch, argus, specs)]
    if workload == "moe":
        return [TorchMoeLoop(torch), TritonMoe(torch)]
    if plan.is_gemm(workload):
        argus_out = specs[0][1].out_dtype if specs[0][1] else "bf16"
        if workload == "gemm_epilogue":
            return [TorchAddmmGelu(torch), TritonFused(torch, argus_out)]
        impls = [Cublas(torch)] + ([CublasF32(torch)] if argus_out == "f32" else []) + [Triton(torch, argus_out)]
        if workload == "gemm":
            impls.append(TritonMmaSync(torch, argus_out))
        if workload == "gemm_nt":  # the same W for everyone: cuBLAS and Triton get its transposed view
            for impl in impls:
                impl.note = "; ".join(filter(None, [impl.note, "B = W.t(), a strided (K, N) view of W (N, K)"]))
        return impls
    return [Sdpa(torch, "flash", "FLASH_ATTENTION"), Sdpa(torch, "cudnn", "CUDNN_ATTENTION")]


# ----------------------------------------------------------------------------- checking and timing

TORCH_DTYPE = {"f32": "float32", "bf16": "bfloat16", "f16": "float16"}


def guarded(torch, shape, dtype):
    numel = math.prod(shape)
    buf = torch.full((numel + 2 * GUARD,), float("nan"), device="cuda", dtype=getattr(torch, TORCH_DTYPE[dtype]))
    return buf, buf[GUARD:GUARD + numel].view(shape)


def check_one(torch, impl, p, thr):
    """(passed, rel_error, why) for one fresh input set."""
    buf, out = guarded(torch, p.out_shape, impl.out_dtype)
    res = impl.run(p, out)
    if res is not out:
        out.copy_(res)
    torch.cuda.synchronize()
    checked = p.checked(out)
    nan = int(torch.isnan(checked).sum().item())
    guard_ok = bool(torch.isnan(buf[:GUARD]).all().item() and torch.isnan(buf[GUARD + out.numel():]).all().item())
    rel = relative_error(torch, checked, p.reference())
    why = []
    if nan:
        why.append(f"{nan} of {checked.numel()} outputs NaN (unwritten?)")
    if not guard_ok:
        why.append("wrote outside its output")
    if not rel <= thr:
        why.append(f"rel. error {rel:.3e} > {thr:g}")
    return not why, rel, "; ".join(why)


def time_impl(torch, impl, sets, replays):
    """(median, min, max ms per launch, 'graph' or 'eager', results, note)."""
    outs = [guarded(torch, s.out_shape, impl.out_dtype)[1] for s in sets]
    for _ in range(2):
        for s, o in zip(sets, outs):
            impl.run(s, o)
    torch.cuda.synchronize()
    note = None
    try:
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            results = [impl.run(s, o) for s, o in zip(sets, outs)]
        for o in outs:
            o.fill_(float("nan"))
        g.replay()
        run, mode = g.replay, "graph"
    except Exception as e:  # noqa: BLE001 -- fall back to eager launches, say so
        note = f"graph capture failed, eager launches timed: {type(e).__name__}: {str(e)[:200]}"
        torch.cuda.synchronize()
        results = [None] * len(sets)

        def run():
            for i, (s, o) in enumerate(zip(sets, outs)):
                results[i] = impl.run(s, o)
        mode = "eager"
        run()
    torch.cuda.synchronize()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(replays)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(replays)]
    for i in range(replays):
        starts[i].record()
        run()
        ends[i].record()
    torch.cuda.synchronize()
    times = [a.elapsed_time(b) / len(sets) for a, b in zip(starts, ends)]
    return statistics.median(times), min(times), max(times), mode, results, note


def is_context_fatal(e):
    text = f"{type(e).__name__} {e}"
    return "CudaError" in text or "CUDA error" in text or "illegal" in text.lower()


def run(args):
    import torch
    torch.backends.cuda.matmul.allow_tf32 = False  # the float32 attention reference stays float32
    torch.backends.cudnn.allow_tf32 = False
    group = args.worker
    workload = group.split(":")[1]
    result = {"group": group, "records": [], "notes": []}
    seed = int.from_bytes(os.urandom(4), "little")
    result["seed"] = seed
    gen = torch.Generator(device="cuda")
    gen.manual_seed(seed)
    impls = make_impls(torch, group, args.ptx_dir)
    result["notes"] += [f"{i.name}: {i.note}" for i in impls if i.note]
    ragged, timed = plan.sizes_of(workload, args.quick)
    replays = 10 if args.quick else 40
    failed = {i.name: None for i in impls}
    dead = None

    def record(impl, size, phase, status, **kw):
        rec = {"workload": workload, "impl": impl.name, "size": list(size), "size_text": plan.size_text(workload, size),
               "phase": phase, "status": status, "out_dtype": impl.out_dtype}
        rec.update(kw)
        result["records"].append(rec)
        return rec

    for size in ragged + timed:
        is_timed = size in timed
        usable = []
        for impl in impls:
            status = impl.status or (f"not run ({dead})" if dead else None)
            if status is None:
                try:
                    impl.supports(size)
                except Unsupported as e:
                    status = f"n/a: {e}"
            if status:
                for phase in (["check", "timed"] if is_timed else ["check"]):
                    record(impl, size, phase, status)
            else:
                usable.append(impl)
        if not usable:
            continue
        thr = {i.name: thresholds(workload, i.out_dtype) for i in usable}
        checks = [Problem(torch, workload, size, gen) for _ in range(2)]
        for impl in usable:
            try:
                verdicts = []
                for variant in impl.variants(size) if hasattr(impl, "variants") else [None]:
                    if variant is not None:
                        impl.use(size, variant)
                    verdicts += [check_one(torch, impl, p, thr[impl.name]) for p in checks]
                ok = all(v[0] for v in verdicts)
                rel = max(v[1] for v in verdicts)
                why = "; ".join(v[2] for v in verdicts if v[2])
                record(impl, size, "check", "ok" if ok else "FAIL", rel_error=rel, threshold=thr[impl.name], why=why)
                if not ok and failed[impl.name] is None:
                    failed[impl.name] = f"failed the check at {plan.size_text(workload, size)}"
            except Unsupported as e:
                record(impl, size, "check", f"n/a: {e}")
            except Exception as e:  # noqa: BLE001
                record(impl, size, "check", "FAIL", why=f"{type(e).__name__}: {str(e)[:500]}",
                       traceback=traceback.format_exc()[-2000:])
                failed[impl.name] = failed[impl.name] or f"raised at {plan.size_text(workload, size)}"
                if is_context_fatal(e):
                    dead = "the CUDA context was lost"
                    break
        del checks
        if not is_timed or dead:
            torch.cuda.empty_cache()
            continue
        sets = [Problem(torch, workload, size, gen) for _ in range(SETS)]
        for impl in usable:
            prior = [r for r in result["records"] if r["impl"] == impl.name and r["size"] == list(size)]
            if prior and prior[-1]["status"].startswith("n/a"):
                record(impl, size, "timed", prior[-1]["status"])
                continue
            if failed[impl.name]:
                record(impl, size, "timed", "FAIL", why=f"not timed: {failed[impl.name]}")
                continue
            try:
                # Several builds of one kernel (row kernels): each is timed, the fastest is reported.
                best = None
                for variant in impl.variants(size) if hasattr(impl, "variants") else [None]:
                    if variant is not None:
                        impl.use(size, variant)
                    timing = time_impl(torch, impl, sets, replays)
                    if best is None or timing[0] < best[1][0]:
                        best = (variant, timing)
                if best[0] is not None:
                    impl.use(size, best[0])
                med, lo, hi, mode, results, note = best[1]
                worst = max(relative_error(torch, s.checked(r), s.reference()) for r, s in zip(results, sets))
                if not worst <= thr[impl.name]:
                    failed[impl.name] = "wrong after timing"
                    record(impl, size, "timed", "FAIL", why=f"wrong after timing: rel. error {worst:.3e}")
                    continue
                flops = plan.flops_of(workload, size)
                rec = record(impl, size, "timed", "ok", ms=med, ms_min=lo, ms_max=hi, timing=mode, replays=replays,
                             launches_per_replay=len(sets), rel_error=worst, threshold=thr[impl.name],
                             tflops=None if flops is None else flops / (med * 1e-3) / 1e12)
                if plan.is_row(workload):
                    rec["gbps"] = plan.row_bytes(workload, size) / (med * 1e-3) / 1e9
                if note:
                    rec["why"] = note
                if hasattr(impl, "config"):
                    rec["config"] = impl.config(size)
            except Unsupported as e:
                record(impl, size, "timed", f"n/a: {e}")
            except Exception as e:  # noqa: BLE001
                record(impl, size, "timed", "FAIL", why=f"{type(e).__name__}: {str(e)[:500]}",
                       traceback=traceback.format_exc()[-2000:])
                failed[impl.name] = "raised while timing"
                if is_context_fatal(e):
                    dead = "the CUDA context was lost"
                    break
        del sets
        torch.cuda.empty_cache()
    return result

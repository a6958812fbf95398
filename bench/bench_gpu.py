#!/usr/bin/env python3
"""Argus against its peers on the GPU, side by side in one run.

    python3 bench/bench_gpu.py --ptx-dir DIR --out-dir DIR [--quick]
        [--only gemm|gemm_nt|gemm_nn|gemm_epilogue|moe|attention|softmax|layernorm|rmsnorm]
    python3 bench/bench_gpu.py --ptx-dir DIR --out-dir DIR --dry-run     # no GPU, no torch needed

Workloads (DESIGN.md section 10):
  - bf16 GEMM C = A @ B (A M x K, B K x N, row-major): Argus `gemm_tc` (DIR/gemm_tc.ptx +
    .meta.json), cuBLAS (torch.matmul), Triton (bench/triton_gemm.py, autotuned), and the
    same Triton kernel through Triton's Ampere passes (mma.sync, cp.async, no wgmma): gemm_tc
    is sm_80-style code, so that is its like-for-like peer;
  - "gemm_nt", bf16 GEMM on the Hopper path, C = A @ W^T (A M x K, W N x K, both K-major: a
    linear layer): Argus `gemm_persistent` (DIR/gemm_persistent.ptx, or `gemm_wgmma` where
    that is not built; sm_90a: wgmma, TMA tensor maps, mbarriers, a producer warpgroup), cuBLAS (torch.matmul(A, W.t())), Triton (the same kernel given
    the strided view W.t() as B). Same data for all three; K must be a multiple of 8 for TMA
    (16-byte rows), so the ragged sizes have M, N off the tiles and K = 8 mod 64, and one
    K = 300 size shows the n/a;
  - "gemm_nn", bf16 GEMM on the Hopper path with B stored (K, N) as torch.matmul stores it,
    C = A @ B written the natural way: Argus `gemm_nn` (DIR/gemm_nn.ptx; sm_90a: wgmma with
    B read N-major, TMA boxes in 64-column panels), cuBLAS (torch.matmul(A, B)), Triton (the
    same kernel as "gemm"). TMA needs 16-byte rows of A and B: K and N multiples of 8 (one
    ragged size with N = 1003 shows the n/a);
  - "gemm_epilogue", a linear layer with its activation fused, C = gelu(A @ B + bias) (bias
    (N,) bf16, the exact erf GELU in float32, C bf16, B stored (K, N)): Argus `gemm_bias_gelu`
    (DIR/gemm_bias_gelu.ptx: gemm_nn's kernel with the epilogue before the store), torch
    unfused (F.gelu(torch.addmm(bias, A, B)): what nn.Linear then F.gelu run, the bias in
    cuBLAS's epilogue, then a GELU kernel), and Triton with the same fused epilogue
    (bench/triton_gemm.py, autotuned). Sizes and the n/a as "gemm_nn". A is drawn with
    standard deviation 1/sqrt(K), so that A @ B + bias is about N(0, 2) and the checks reach
    the GELU's curved part. FLOPs = 2MNK: the epilogue is not counted. The table's
    "Argus / best peer" is the faster peer's time over Argus's (the issue's target: >= 1);
  - "moe", the bf16 grouped GEMM of a mixture-of-experts layer: tokens routed to their top-k
    experts (random, fixed seed), the token-expert pairs sorted by expert and each expert's
    rows padded to a multiple of BM (vLLM's moe_align_block_size layout: X (T_pad, K),
    block_expert (T_pad / BM,) i32, -1 for a padding block), Y (T_pad, N) = the rows of each
    block times W[block_expert]^T, W (E, N, K). The preparation is done once per size, outside
    timing, for everyone. Argus `moe_gemm` (DIR/moe_gemm.ptx, BM=64, one warpgroup; then
    DIR/moe_gemm_persistent.ptx, BM=128, persistent, and DIR/moe_gemm_bm128.ptx, BM=128, two
    warpgroups: each case runs on the first build whose BM is the case's), a per-expert torch loop over the unpadded segments (torch.matmul per expert
    with out= into Y), and a fused-MoE style Triton kernel (bench/triton_moe.py, autotuned,
    BLOCK_M = the padding BM). Only the rows of real token-expert pairs are checked (padding
    rows are don't-care); FLOPs = 2 * pairs * N * K. Sizes: MOE_MODELS below;
  - bf16 attention forward (B, H, S, D), non-causal and causal: Argus `attention`
    (DIR/attention.ptx; builds with other -D constants, a causal one or another head size, may
    sit beside it as DIR/attention_*.ptx: each case runs on the first that accepts it), SDPA with the
    FLASH_ATTENTION and with the CUDNN_ATTENTION backend;
  - bf16 row kernels over X (M, N), one row per program, computed in float32: "softmax"
    (y = softmax(x) along rows), "layernorm" (y = (x - mean) * rstd * w + b) and "rmsnorm"
    (y = x * rsqrt(mean(x^2) + eps) * w), eps = 1e-5, w and b bf16 (N,): Argus
    `softmax_bf16` / `layernorm_bf16` / `rmsnorm_bf16` (DIR/<name>_b<BLOCK>_w<WARPS>.ptx,
    builds of examples/<name>.ag for several BLOCK and warps; each case runs on the builds
    whose BLOCK is the smallest that holds its rows, and the fastest of those is timed, as
    Triton's autotuner picks num_warps), Triton as in its tutorials (bench/triton_rows.py,
    num_warps autotuned) and torch (F.softmax, F.layer_norm, F.rms_norm). Reported in GB/s of
    the fewest bytes the kernel must move (X read once, Y written once, w and b read once).

Method (.library/device/METHOD.md): every implementation is checked first, on fresh random
inputs at ragged sizes (not multiples of any tile) and at each timed size, its output
poisoned with NaN, by ||out - ref|| / ||ref|| against a float64 (GEMM) or float32
(attention, row kernels: bf16 inputs upcast) torch reference. One ragged row-kernel case
reads X from an address 2 bytes off 16-byte alignment (the element path of vectorized
kernels). Only an implementation whose checks all passed is timed:
CUDA events around CUDA-graph replays of one launch per input set, rotating among 4
fresh input sets, after warm-up; the median over the replays, per launch. The timed
outputs are checked again afterwards. A kernel whose PTX is missing is a "not built"
row; a wrong result is FAIL and is never timed.

Each group (per workload, the Argus kernel and its peers: "argus:gemm_nt", "peers:gemm_nt",
...) runs in its own subprocess, so a kernel that faults cannot take the others with it. Writes
bench_gpu.json (every number, the machine, the versions, the command), bench_gpu.md and
bench_gpu.png into --out-dir.
"""

import argparse
import ast
import datetime
import json
import os
import platform
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "bench"))

from bench_bindings import (AttentionBinding, GemmBinding, MetadataMismatch, MoeBinding, RowBinding,  # noqa: E402
                            Unsupported)

# ----------------------------------------------------------------------------- the plan

GEMM_IMPLS = ["argus", "cublas", "triton"]
ATTN_IMPLS = ["argus", "flash", "cudnn"]
MOE_IMPLS = ["argus", "torch_loop", "triton"]
EPILOGUE_IMPLS = ["argus", "torch_unfused", "triton_fused"]
ROW_IMPLS = ["argus", "triton", "torch"]
ROW_WORKLOADS = ("softmax", "layernorm", "rmsnorm")
# Row kernels: builds named <name>_<tag>_b<BLOCK>_w<WARPS>.ptx are the same kernels built by
# another compiler, comparison rows "argus_<tag>" (ROW_TAGS); the others are Argus's.
ROW_TAGS = {"before": "Argus before vec16 (2-byte accesses)",
            "veconly": "Argus vec16 without the approximate exp"}
LABELS = {"torch": "torch (F.softmax / F.layer_norm / F.rms_norm)", "argus": "Argus", "cublas": "cuBLAS (torch.matmul)", "cublas_f32": "cuBLAS (mm, out_dtype f32)",
          "triton": "Triton (autotuned)", "triton_mma": "Triton, mma.sync path (autotuned)", "torch_loop": "torch, per-expert loop", "flash": "SDPA FlashAttention-2", "cudnn": "SDPA cuDNN",
          "torch_unfused": "torch (addmm + F.gelu)", "triton_fused": "Triton, fused epilogue (autotuned)"}
WORKLOADS = ["gemm", "gemm_nt", "gemm_nn", "gemm_epilogue", "moe", "attention", "softmax", "layernorm", "rmsnorm"]
LABELS.update({"argus_" + tag: label for tag, label in ROW_TAGS.items()})
TITLES = {"gemm": "bf16 GEMM", "gemm_nt": "bf16 GEMM, Hopper path (C = A @ W^T)",
          "gemm_nn": "bf16 GEMM, Hopper path (C = A @ B, B stored (K, N))",
          "gemm_epilogue": "bf16 GEMM + bias + GELU, Hopper path (C = gelu(A @ B + bias), B stored (K, N))",
          "moe": "bf16 MoE grouped GEMM (Y = X @ W[e]^T per block of BM rows)", "attention": "bf16 attention forward",
          "softmax": "bf16 softmax along rows", "layernorm": "bf16 layernorm (w, b)", "rmsnorm": "bf16 RMSNorm (w)"}
ARGUS_FILES = {"gemm": [("gemm_tc.ptx", "gemm_tc")], "gemm_nt": [("gemm_persistent.ptx", "gemm_persistent"), ("gemm_wgmma.ptx", "gemm_wgmma")],
               "gemm_nn": [("gemm_nn.ptx", "gemm_nn")],
               "gemm_epilogue": [("gemm_bias_gelu.ptx", "gemm_bias_gelu")],
               "moe": [("moe_gemm.ptx", "moe_gemm"), ("moe_gemm_persistent.ptx", "moe_gemm"),
                       ("moe_gemm_bm128.ptx", "moe_gemm")],
               "attention": [("attention.ptx", "attention")]}


def is_row(workload):
    """softmax, layernorm, rmsnorm: bf16 row kernels over X (M, N)."""
    return workload in ROW_WORKLOADS


def is_gemm(workload):
    """gemm, gemm_nn: C = A @ B; gemm_nt: C = A @ W^T; gemm_epilogue: C = gelu(A @ B + bias).
    All are (M, N, K) sized."""
    return workload in ("gemm", "gemm_nt", "gemm_nn", "gemm_epilogue")


# Workloads whose table ends with Argus against the fastest of its peers (speedup_cell).
BEST_PEER_WORKLOADS = ("moe", "gemm_epilogue")


def impls_for(workload):
    """gemm_tc is sm_80-style code, so its workload also has Triton's mma.sync build."""
    if workload == "gemm":
        return GEMM_IMPLS + ["triton_mma"]
    if is_row(workload):
        return ROW_IMPLS
    if workload == "gemm_epilogue":
        return EPILOGUE_IMPLS
    return GEMM_IMPLS if is_gemm(workload) else MOE_IMPLS if workload == "moe" else ATTN_IMPLS


def gemm_sizes(quick):
    """(checked-only ragged sizes, timed sizes); every timed size is checked too."""
    ragged = [(1000, 1003, 520)] if quick else [(1000, 1003, 520), (129, 257, 300), (1, 1, 1)]
    timed = [(2048, 2048, 2048), (4096, 4096, 512)] if quick else \
        [(4096, 4096, 4096), (8192, 8192, 8192), (4096, 4096, 512)]
    return ragged, timed


def gemm_nt_sizes(quick):
    """As gemm_sizes, but the ragged K are multiples of 8 that are not multiples of 64
    (TMA needs 16-byte rows; the last tile along K is partly zero-filled) while M and N
    are off the 128 x 256 tiles; K = 300 is n/a for TMA kernels, a visible row. N = 1003
    and 257 (rows not 16-byte aligned) store without TMA; N = 1000 stores by TMA, which
    clips the edge tiles."""
    ragged = [(1000, 1003, 520), (1000, 1000, 520)] if quick else \
        [(1000, 1003, 520), (1000, 1000, 520), (129, 257, 136), (1, 1, 8), (129, 257, 300)]
    return ragged, gemm_sizes(quick)[1]


def gemm_nn_sizes(quick):
    """As gemm_sizes, but TMA reads rows of A (K) and of B (N): the ragged K and N are
    multiples of 8 off the 64 x 256 tiles, M off the 128-row tiles; N = 1003 is n/a."""
    ragged = [(1000, 1000, 520), (1000, 1003, 520)] if quick else \
        [(1000, 1000, 520), (129, 264, 136), (1, 8, 8), (300, 600, 72), (1000, 1003, 520)]
    return ragged, gemm_sizes(quick)[1]


def row_sizes(quick):
    """(M, N, skew) tuples: (checked-only, timed). The ragged ones have N off every
    power of two; N = 1000 (a multiple of 8: 16-byte rows, the vector path with masked
    groups), 4095 and 8191 (rows not 16-byte aligned: the element path); skew 1 reads X
    from 2 bytes past a 16-byte boundary."""
    ragged = [(37, 1000, 0), (129, 4095, 0), (3, 8191, 0), (1, 8, 0), (65, 1000, 1)]
    timed = [(4096, 4096, 0)] if quick else [(4096, 4096, 0), (8192, 8192, 0), (4096, 8192, 0)]
    return ragged, timed


def sizes_of(workload, quick):
    if is_row(workload):
        return row_sizes(quick)
    return {"gemm": gemm_sizes, "gemm_nt": gemm_nt_sizes, "gemm_nn": gemm_nn_sizes, "gemm_epilogue": gemm_nn_sizes,
            "moe": moe_sizes, "attention": attention_sizes}[workload](quick)


# MoE layers the timed cases take their shapes from (E experts, top-k, N and K of the
# expert GEMM, Y = X @ W^T with W (N, K)): Mixtral 8x7B's w1 (hidden 4096 -> 14336), and
# DeepSeek-V2-Lite's fused gate+up projection (64 routed experts, top-6, hidden 2048 ->
# 2 * 1408). Tokens: 64 (decode-like: a few rows per expert, BM = 64) and 8192
# (prefill-like: hundreds to thousands of rows per expert, BM = 128).
MOE_MODELS = {"mixtral": (8, 2, 14336, 4096), "deepseek": (64, 6, 2816, 2048)}
MOE_ROUTING_SEED = 20260


def moe_sizes(quick):
    """(E, topk, tokens, N, K, BM, padding blocks) tuples: (checked-only, timed). The ragged
    ones have N off every tile, K a multiple of 8 but not of 64 (TMA: 16-byte rows), experts
    without rows, and a trailing padding block (block_expert -1); K = 300 shows the n/a.
    N = 1000 has 16-byte rows: its outputs go by TMA stores, clipped at the edges."""
    ragged = [(8, 2, 37, 1003, 520, 64, 1), (64, 6, 5, 300, 136, 64, 1), (8, 2, 300, 257, 72, 128, 1),
              (8, 2, 20, 100, 300, 64, 0), (8, 2, 300, 1000, 72, 128, 1)]
    timed = []
    for model in ("mixtral", "deepseek"):
        e, k, n, hidden = MOE_MODELS[model]
        for tokens, bm in ((64, 64), (2048, 128)) if quick else ((64, 64), (8192, 128)):
            timed.append((e, k, tokens, n, hidden, bm, 0))
    if quick:
        timed = [timed[0], timed[3]]
    return ragged, timed


class MoeLayout:
    """The sorted, padded layout of one MoE case (pure Python, no torch): every token's
    top-k experts drawn at random with a fixed seed; the token-expert pairs grouped by
    expert, each expert's rows padded to a multiple of BM; then the padding blocks.
    segments: (expert, first row, rows) of each expert that has rows; block_expert: the
    expert of each block of BM rows (-1: padding); t_pad: rows of X and Y."""

    def __init__(self, size):
        import random
        experts, topk, tokens, _, _, bm, padding_blocks = size
        rng = random.Random(MOE_ROUTING_SEED + experts * 1000003 + tokens)
        counts = [0] * experts
        for _ in range(tokens):
            for e in rng.sample(range(experts), topk):
                counts[e] += 1
        self.counts = counts
        self.pairs = sum(counts)
        self.segments, self.block_expert, row = [], [], 0
        for e, rows in enumerate(counts):
            if rows:
                self.segments.append((e, row, rows))
                blocks = -(-rows // bm)
                self.block_expert += [e] * blocks
                row += blocks * bm
        self.block_expert += [-1] * padding_blocks
        self.t_pad = len(self.block_expert) * bm


_MOE_LAYOUTS = {}


def moe_layout(size):
    size = tuple(size)
    if size not in _MOE_LAYOUTS:
        _MOE_LAYOUTS[size] = MoeLayout(size)
    return _MOE_LAYOUTS[size]


def attention_sizes(quick):
    """(B, H, S, D, causal) tuples: (checked-only, timed)."""
    ragged = [(1, 3, 1000, 128), (2, 2, 77, 64)]
    timed = [(2, 8, 1024, 128), (2, 8, 1024, 64)] if quick else [(4, 32, 4096, 128), (8, 32, 2048, 64)]
    both = lambda shapes: [s + (c,) for s in shapes for c in (False, True)]  # noqa: E731
    return both(ragged), both(timed)


def gemm_flops(size):
    m, n, k = size
    return 2.0 * m * n * k


def attention_flops(size):
    b, h, s, d, causal = size
    return 4.0 * b * h * s * s * d / (2 if causal else 1)


def moe_flops(size):
    """2 * (real token-expert pairs) * N * K: padding rows do not count."""
    experts, topk, tokens, n, k = size[:5]
    return 2.0 * tokens * topk * n * k


def row_bytes(workload, size):
    """The fewest bytes a row kernel moves: X read and Y written once (bf16), w and b once."""
    m, n = size[:2]
    vectors = {"softmax": 0, "layernorm": 2, "rmsnorm": 1}[workload]
    return 2.0 * (2 * m * n + vectors * n)


def flops_of(workload, size):
    if is_row(workload):
        return None
    if workload == "moe":
        return moe_flops(size)
    return gemm_flops(size) if is_gemm(workload) else attention_flops(size)


def size_text(workload, size):
    if is_row(workload):
        return "M={} N={}".format(*size[:2]) + (" (X 2 bytes off alignment)" if size[2] else "")
    if is_gemm(workload):
        return "M={} N={} K={}".format(*size)
    if workload == "moe":
        e, topk, tokens, n, k, bm, padding = size
        return f"E={e} top{topk} tokens={tokens} N={n} K={k} BM={bm}" + (f" +{padding} pad" if padding else "")
    return "B={} H={} S={} D={}{}".format(*size[:4], " causal" if size[4] else "")


# ----------------------------------------------------------------------------- Argus kernels

def row_tag(file_name, name):
    rest = file_name[len(name):-len(".ptx")].lstrip("_")
    tag = rest.split("_")[0]
    return tag if tag in ROW_TAGS else None


def load_specs(ptx_dir, workload, tag=None):
    """[(ptx path, binding or None, status text)] for the workload's Argus kernels;
    no torch, no GPU. Raises MetadataMismatch / MetadataError on a bad metadata file."""
    from argus.meta import read_metadata
    out = []
    if is_row(workload):  # every build of the row kernel: <workload>_bf16*.ptx
        name = f"{workload}_bf16"
        builds = sorted(f for f in os.listdir(ptx_dir) if f.startswith(name) and f.endswith(".ptx")
                        and row_tag(f, name) == tag)
        if not builds and tag:
            return []
        if not builds:
            return [(os.path.join(ptx_dir, name + ".ptx"), None, "not built")]
        seen = set()
        for file_name in builds:
            path = os.path.join(ptx_dir, file_name)
            specs = {s.name: s for s in read_metadata(path)}
            if name not in specs:
                raise MetadataMismatch(f"{path}: no kernel '{name}' in its metadata (kernels: {', '.join(specs)})")
            binding = RowBinding(specs[name], workload)
            if binding.config() not in seen:  # the example's default build is also one of the variants
                seen.add(binding.config())
                out.append((path, binding, "built"))
        return out
    files = ARGUS_FILES[workload]
    if workload == "attention":  # -D variants (causal, another head size) as attention_*.ptx
        variants = sorted(f for f in os.listdir(ptx_dir) if f.startswith("attention_") and f.endswith(".ptx"))
        # The Hopper kernels (attention_wgmma*.ptx, D = 128 and 64) go first, so that they run the
        # sizes they support; the mma.sync kernels run the rest.
        hopper = [(f, "attention_wgmma") for f in variants if f.startswith("attention_wgmma")]
        files = hopper + [files[0]] + [(f, "attention") for f in variants if not f.startswith("attention_wgmma")]
    for file_name, kernel in files:
        path = os.path.join(ptx_dir, file_name)
        if not os.path.exists(path) and file_name != files[0][0]:
            continue
        if not os.path.exists(path):
            out.append((path, None, "not built"))
            continue
        specs = {s.name: s for s in read_metadata(path)}
        if kernel not in specs:
            raise MetadataMismatch(f"{path}: no kernel '{kernel}' in its metadata (kernels: {', '.join(specs)})")
        if is_gemm(workload):
            binding = GemmBinding(specs[kernel], transposed_b=workload == "gemm_nt", bias=workload == "gemm_epilogue")
        elif workload == "moe":
            binding = MoeBinding(specs[kernel])
        else:
            binding = AttentionBinding(specs[kernel])
        out.append((path, binding, "built"))
    return out


# ----------------------------------------------------------------------------- workers

def run_worker(args):
    import bench_gpu_worker
    return bench_gpu_worker.run(args)


def run_group(args, group, scratch):
    part = os.path.join(scratch, group.replace(":", "_") + ".json")
    cmd = [sys.executable, os.path.abspath(__file__), "--ptx-dir", args.ptx_dir, "--out-dir", args.out_dir,
           "--worker", group, "--worker-out", part] + (["--quick"] if args.quick else [])
    started = time.time()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
        if os.path.exists(part):
            with open(part) as f:
                res = json.load(f)
            if proc.returncode != 0:
                res["worker_error"] = f"worker exited with {proc.returncode}: {proc.stderr[-2000:]}"
        else:
            res = {"group": group, "records": [],
                   "worker_error": f"worker exited with {proc.returncode}: {proc.stderr[-3000:]}"}
        res["stderr_tail"] = proc.stderr[-3000:]
    except subprocess.TimeoutExpired:
        res = {"group": group, "records": [], "worker_error": f"timed out after {args.timeout:.0f} s (a hang?)"}
    res["seconds"] = round(time.time() - started, 1)
    if os.path.exists(part):
        os.remove(part)
    return res


# ----------------------------------------------------------------------------- report

def environment():
    env = {"python": platform.python_version(), "host": platform.node()}
    try:
        import torch
        env["torch"] = torch.__version__
        env["cuda_runtime"] = torch.version.cuda
        env["cudnn"] = torch.backends.cudnn.version()
        if torch.cuda.is_available():
            p = torch.cuda.get_device_properties(0)
            env["gpu"] = p.name
            env["sm_count"] = p.multi_processor_count
            env["memory_gib"] = round(p.total_memory / 2**30, 1)
            env["capability"] = f"{p.major}.{p.minor}"
    except Exception as e:  # noqa: BLE001 -- reported, not hidden
        env["torch_error"] = str(e)
    try:
        import triton
        env["triton"] = triton.__version__
    except Exception as e:  # noqa: BLE001
        env["triton_error"] = str(e)
    try:
        env["nvidia_smi"] = subprocess.run(
            ["nvidia-smi", "--query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,"
             "temperature.gpu", "--format=csv,noheader"], capture_output=True, text=True, timeout=20).stdout.strip()
    except Exception:  # noqa: BLE001
        pass
    return env


def cell(rec):
    if rec is None:
        return "-"
    st = rec["status"]
    if st == "ok" and rec.get("gbps") is not None:
        return f"**{rec['gbps']:.0f}** ({rec['ms']:.4f} ms)"
    if st == "ok" and rec.get("tflops") is not None:
        return f"**{rec['tflops']:.0f}** ({rec['ms']:.3f} ms)"
    if st == "ok":
        return f"pass ({rec['rel_error']:.1e})"
    if st == "FAIL":
        return "FAIL"
    return st if len(st) <= 70 else st[:67] + "..."


def timed_table(records, workload, impls):
    sizes = []
    for r in records:
        if r["workload"] == workload and r["phase"] == "timed" and r["size_text"] not in sizes:
            sizes.append(r["size_text"])
    speedup = workload in BEST_PEER_WORKLOADS and "argus" in impls and len(impls) > 1
    ratios = [i for i in impls if i != "argus"] if is_row(workload) and "argus" in impls else []
    unit = " GB/s (ms)" if is_row(workload) else " TFLOP/s (ms)"
    head = "| size | " + " | ".join(LABELS[i] + unit for i in impls) + \
        (" | Argus / best peer" if speedup else "") + "".join(f" | Argus / {LABELS[i].split(' (')[0]}" for i in ratios) + " |"
    lines = [head, "|" + "---|" * (len(impls) + 1 + speedup + len(ratios))]
    for s in sizes:
        row = []
        for impl in impls:
            rec = next((r for r in records if r["workload"] == workload and r["phase"] == "timed"
                        and r["size_text"] == s and r["impl"] == impl), None)
            row.append(cell(rec))
        if speedup:
            row.append(speedup_cell(records, workload, s, impls))
        for peer in ratios:
            row.append(ratio_cell(records, workload, s, peer))
        lines.append(f"| {s} | " + " | ".join(row) + " |")
    return lines


def speedup_cell(records, workload, size, impls):
    """Argus's time against the fastest peer that passed, as 'x1.23 (peer)'."""
    ms = {r["impl"]: r["ms"] for r in records if r["workload"] == workload and r["phase"] == "timed"
          and r["size_text"] == size and r["status"] == "ok" and r.get("ms")}
    peers = [(ms[i], i) for i in impls if i != "argus" and i in ms]
    if "argus" not in ms or not peers:
        return "-"
    best_ms, best = min(peers)
    return f"x{best_ms / ms['argus']:.2f} ({LABELS[best]})"


def ratio_cell(records, workload, size, peer):
    """Argus's speed against one peer's (the peer's time over Argus's), as 'x1.23'."""
    ms = {r["impl"]: r["ms"] for r in records if r["workload"] == workload and r["phase"] == "timed"
          and r["size_text"] == size and r["status"] == "ok" and r.get("ms")}
    return f"x{ms[peer] / ms['argus']:.2f}" if "argus" in ms and peer in ms else "-"


def check_table(records):
    lines = ["| workload | impl | size | phase | rel. error | threshold | verdict |", "|---|---|---|---|---|---|---|"]
    for r in records:
        err = "-" if r.get("rel_error") is None else f"{r['rel_error']:.2e}"
        why = r.get("why", "")
        lines.append(f"| {r['workload']} | {LABELS.get(r['impl'], r['impl'])} | {r['size_text']} | {r['phase']} | "
                     f"{err} | {r.get('threshold', '-')} | {r['status']}{(': ' + why) if why else ''} |")
    return lines


def all_records(doc):
    return [r for g in doc["groups"] for r in g.get("records", [])]


def impls_of(records, workload, default):
    seen = [i for i in default if any(r["impl"] == i and r["workload"] == workload for r in records)]
    extra = sorted({r["impl"] for r in records if r["workload"] == workload} - set(default))
    return (seen or default) + extra


def markdown(doc):
    env = doc["environment"]
    records = all_records(doc)
    lines = ["# Argus against cuBLAS, Triton and SDPA", "",
             f"- date: {doc['date']}", f"- command: `{doc['command']}`",
             f"- machine: {env.get('gpu', '?')} ({env.get('sm_count', '?')} SMs), nvidia-smi: "
             f"{env.get('nvidia_smi', '?')}", f"- torch {env.get('torch', '?')} (CUDA {env.get('cuda_runtime', '?')}, "
             f"cuDNN {env.get('cudnn', '?')}), triton {env.get('triton', '?')}, python {env.get('python', '?')}",
             "- method: each implementation is first checked on fresh random normal inputs (two per size, ragged "
             "sizes included; GEMM + bias + GELU: A scaled by 1/sqrt(K), so that the GELU's input is about "
             "N(0, 2)), output poisoned with NaN; rel. error = ||out - ref|| / ||ref|| against torch float64 "
             "(GEMM) or float32 (attention and row kernels, bf16 inputs upcast). Only implementations whose every check passed are "
             "timed: one launch per input set (4 fresh sets) captured in a CUDA graph, warm-up, then the median of "
             f"{doc['replays']} graph replays timed with CUDA events, per launch; the outputs are re-checked after "
             "timing. GEMM FLOPs = 2MNK (GEMM + bias + GELU too: the epilogue is not counted); attention FLOPs = 4 B H S^2 D, halved for causal; MoE FLOPs = 2 * "
             "(token-expert pairs) * N * K, padding rows not counted, routing and padding prepared outside timing. "
             "Row kernels: GB/s of X read once, Y written once and w, b read once (bf16); Argus / peer is the "
             "peer's time over Argus's (above 1: Argus faster); Argus / best peer (MoE, GEMM + bias + GELU) likewise "
             "against the fastest peer that passed.",
             ""]
    for workload in WORKLOADS:
        if not any(r["workload"] == workload for r in records):
            continue
        lines += [f"## {TITLES[workload]}", ""] + \
            timed_table(records, workload, impls_of(records, workload, impls_for(workload))) + [""]
    notes = [f"{g['group']}: {g['worker_error']}" for g in doc["groups"] if "worker_error" in g]
    notes += [f"{g['group']}: {n}" for g in doc["groups"] for n in g.get("notes", [])]
    if notes:
        lines += ["## Notes", ""] + [f"- {n}" for n in notes] + [""]
    lines += ["## Timing detail", "", "| workload | impl | size | out dtype | median ms | min ms | max ms | timing | "
              "TFLOP/s or GB/s | config |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in records:
        if r["phase"] == "timed" and r.get("ms") is not None:
            num = lambda key, spec: "-" if r.get(key) is None else format(r[key], spec)  # noqa: E731
            lines.append(f"| {r['workload']} | {LABELS.get(r['impl'], r['impl'])} | {r['size_text']} | "
                         f"{r.get('out_dtype', '?')} | {num('ms', '.4f')} | {num('ms_min', '.4f')} | "
                         f"{num('ms_max', '.4f')} | {r.get('timing', '?')} x{r.get('replays', '?')} | "
                         f"{num('tflops', '.1f') if r.get('gbps') is None else num('gbps', '.0f') + ' GB/s'} | "
                         f"{r.get('config') or ''} |")
    lines += ["", "## Every check", ""] + check_table(records) + [""]
    return "\n".join(lines) + "\n"


def plot(doc, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except Exception as e:  # noqa: BLE001
        return f"no plot: {e}"
    records = [r for r in all_records(doc) if r["phase"] == "timed"]
    panels = [(w, impls_of(records, w, impls_for(w))) for w in WORKLOADS if any(r["workload"] == w for r in records)]
    if not panels:
        return "no plot: nothing was timed"
    fig, axes = plt.subplots(1, len(panels), figsize=(7 * len(panels), 4.8), squeeze=False)
    for ax, (workload, impls) in zip(axes[0], panels):
        sizes = []
        for r in records:
            if r["workload"] == workload and r["size_text"] not in sizes:
                sizes.append(r["size_text"])
        width = 0.8 / len(impls)
        for j, impl in enumerate(impls):
            for i, s in enumerate(sizes):
                rec = next((r for r in records if r["workload"] == workload and r["impl"] == impl
                            and r["size_text"] == s), None)
                x = i + (j - (len(impls) - 1) / 2) * width
                value = rec.get("gbps", rec.get("tflops")) if rec else None
                if value is not None:
                    ax.bar(x, value, width, color=f"C{j}", label=LABELS[impl] if i == 0 else None)
                    ax.text(x, value, f"{value:.0f}", ha="center", va="bottom", fontsize=7)
                else:
                    ax.bar(x, 0, width, color=f"C{j}", label=LABELS[impl] if i == 0 else None)
                    ax.text(x, 5, rec["status"][:24] if rec else "-", ha="center", va="bottom", fontsize=7, rotation=90)
        ax.set_xticks(range(len(sizes)))
        ax.set_xticklabels([s.replace(" causal", "\ncausal") for s in sizes], fontsize=7)
        ax.set_ylabel("GB/s" if is_row(workload) else "TFLOP/s")
        ax.set_title(f"{TITLES[workload]} on {doc['environment'].get('gpu', '?')}", fontsize=10)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    return None


# ----------------------------------------------------------------------------- main

def dry_run(args, workloads):
    """Validates the arguments, the metadata of every built Argus kernel and its binding,
    and that the Triton peer parses; prints the plan. No torch, no GPU."""
    problems = 0
    for workload in workloads:
        ragged, timed = sizes_of(workload, args.quick)
        print(f"{workload}: checks at {len(ragged) + len(timed)} sizes, timed at "
              f"{', '.join(size_text(workload, s) for s in timed)}")
        try:
            for path, binding, status in load_specs(args.ptx_dir, workload):
                print(f"  Argus {os.path.basename(path)}: {status}" + (f": {binding.describe()}" if binding else ""))
                if binding and (is_gemm(workload) or is_row(workload)):
                    for s in ragged + timed:
                        try:
                            binding.check_shape(*s)
                        except Unsupported as e:
                            print(f"    {size_text(workload, s)}: n/a ({e})")
            if workload in ("attention", "moe"):  # each case runs on the first build that accepts it
                bindings = [b for _, b, _ in load_specs(args.ptx_dir, workload) if b]
                for s in ragged + timed if bindings else []:
                    reasons = []
                    for b in bindings:
                        try:
                            b.check_shape(*s)
                            break
                        except Unsupported as e:
                            reasons.append(str(e))
                    else:
                        print(f"    {size_text(workload, s)}: n/a ({'; '.join(reasons)})")
        except Exception as e:  # noqa: BLE001 -- MetadataError, MetadataMismatch: the point of the dry run
            print(f"  ERROR: {type(e).__name__}: {e}")
            problems += 1
        peers = impls_for(workload)[1:]
        print(f"  peers: {', '.join(LABELS[p] for p in peers)}")
    for peer in ("triton_gemm.py", "triton_moe.py", "triton_rows.py"):
        with open(os.path.join(ROOT, "bench", peer)) as f:
            ast.parse(f.read(), peer)
    print("dry run: " + ("ok" if not problems else f"{problems} problem(s)"))
    return 0 if not problems else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ptx-dir", required=True,
                    help="folder with gemm_tc.ptx, gemm_wgmma.ptx, gemm_bias_gelu.ptx, moe_gemm*.ptx, attention.ptx, "
                         "softmax_bf16*.ptx, ... and their .meta.json")
    ap.add_argument("--out-dir", required=True, help="where bench_gpu.json, .md and .png go")
    ap.add_argument("--quick", action="store_true", help="smaller sizes and fewer repeats (a smoke run)")
    ap.add_argument("--dry-run", action="store_true", help="check arguments and metadata only; no GPU needed")
    ap.add_argument("--only", choices=WORKLOADS, action="append", help="only this workload (repeatable)")
    ap.add_argument("--timeout", type=float, default=None, help="seconds per worker group")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--worker-out", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if not os.path.isdir(args.ptx_dir):
        ap.error(f"--ptx-dir {args.ptx_dir}: not a directory")
    if os.path.exists(args.out_dir) and not os.path.isdir(args.out_dir):
        ap.error(f"--out-dir {args.out_dir}: exists and is not a directory")
    if args.timeout is None:
        args.timeout = 240 if args.quick else 540
    workloads = args.only or WORKLOADS

    if args.worker:
        result = run_worker(args)
        with open(args.worker_out, "w") as f:
            json.dump(result, f)
        return 0
    if args.dry_run:
        return dry_run(args, workloads)

    os.makedirs(args.out_dir, exist_ok=True)
    scratch = os.path.join(args.out_dir, ".bench_gpu_parts")
    os.makedirs(scratch, exist_ok=True)
    groups = []
    for workload in workloads:
        for group in (f"argus:{workload}", f"peers:{workload}"):
            res = run_group(args, group, scratch)
            groups.append(res)
            recs = res.get("records", [])
            print(f"{group}: {sum(r['status'] == 'ok' for r in recs)}/{len(recs)} rows ok, "
                  f"{sum(r['status'] == 'FAIL' for r in recs)} FAIL ({res['seconds']} s)"
                  + (f"; {res['worker_error'][:300]}" if "worker_error" in res else ""), flush=True)
    try:
        os.rmdir(scratch)
    except OSError:
        pass
    doc = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
           "command": "python3 " + " ".join([os.path.relpath(os.path.abspath(__file__), os.getcwd())] + sys.argv[1:]),
           "quick": args.quick, "replays": 10 if args.quick else 40,
           "environment": environment(), "groups": groups}
    records = all_records(doc)
    doc["any_fail"] = any(r["status"] == "FAIL" for r in records) or any("worker_error" in g for g in groups)
    text = markdown(doc)
    with open(os.path.join(args.out_dir, "bench_gpu.json"), "w") as f:
        json.dump(doc, f, indent=1)
    with open(os.path.join(args.out_dir, "bench_gpu.md"), "w") as f:
        f.write(text)
    why = plot(doc, os.path.join(args.out_dir, "bench_gpu.png"))
    print()
    print(text.split("## Every check")[0])
    fails = [r for r in records if r["status"] == "FAIL"]
    for r in fails:
        print(f"FAIL {r['workload']} {r['impl']} {r['size_text']} ({r['phase']}): {r.get('why', '')}")
    if why:
        print(why)
    return 1 if doc["any_fail"] else 0


if __name__ == "__main__":
    sys.exit(main())

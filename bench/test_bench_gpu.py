"""Unit tests of bench_gpu.py's GPU-free parts: the metadata bindings of the Argus
kernels, the report, and whole worker groups on a fake GPU (fake_gpu.py stands in
for torch; the Argus kernel and Triton are stand-ins too). Run by ctest
(bench_gpu_dry_run) or:
    python3 -m unittest discover -s bench -p 'test_bench_gpu.py' -v"""

import argparse
import contextlib
import io
import json
import math
import os
import sys
import tempfile
import types
import unittest
from unittest import mock

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import bench_gpu  # noqa: E402  (puts python/ on the path, for argus)
import argus  # noqa: E402
import bench_gpu_worker  # noqa: E402
import fake_gpu  # noqa: E402
from argus.meta import KernelSpec  # noqa: E402
from bench_bindings import (AttentionBinding, GemmBinding, MetadataMismatch, MoeBinding, RowBinding,  # noqa: E402
                            Unsupported)


def tensor(name, dtype, *dims):
    return {"name": name, "kind": "tensor", "dtype": dtype,
            "dims": [{"const": d} if isinstance(d, int) else {"size": d} for d in dims]}


def spec_dict(name, params, sizes, constants=None, tensor_maps=None):
    params = params + [{"name": s, "kind": "size", "dtype": "i32"} for s in sizes]
    return {"name": name, "warps": 4, "threads": 128, "params": params, "sizes": sizes,
            "grid": [{"const": 1}] * 3, "constants": constants or {}, "tensor_maps": tensor_maps or []}


def spec(name, params, sizes, constants=None, tensor_maps=None):
    return KernelSpec(spec_dict(name, params, sizes, constants, tensor_maps))


def wgmma_spec_dict():
    """gemm_wgmma's metadata as argusc writes it (examples/gemm_wgmma.ag), trimmed."""
    return spec_dict("gemm_wgmma", [tensor("A", "bf16", "M", "K"), tensor("W", "bf16", "N", "K"),
                                    tensor("C", "bf16", "M", "N")], ["M", "K", "N"],
                     {"BM": 128, "BN": 256, "BK": 64, "STAGES": 4},
                     [{"param": "A", "box": [128, 64], "swizzle_bytes": 128},
                      {"param": "W", "box": [256, 64], "swizzle_bytes": 128}])


class GemmBindingTest(unittest.TestCase):
    def test_named_operands_in_any_order(self):
        b = GemmBinding(spec("gemm_tc", [tensor("C", "f32", "M", "N"), tensor("A", "bf16", "M", "K"),
                                         tensor("B", "bf16", "K", "N")], ["M", "N", "K"]))
        self.assertEqual(b.out_dtype, "f32")
        self.assertEqual(b.args("a", "b", "c"), ["c", "a", "b"])

    def test_positional_operands_and_alpha_beta(self):
        b = GemmBinding(spec("g", [tensor("x", "bf16", "M", "K"), tensor("y", "bf16", "K", "N"),
                                   tensor("z", "bf16", "M", "N"), {"name": "alpha", "kind": "scalar", "dtype": "f32"},
                                   {"name": "beta", "kind": "scalar", "dtype": "f32"}], ["M", "K", "N"]))
        self.assertEqual(b.args("a", "b", "c"), ["a", "b", "c", 1.0, 0.0])

    def test_constant_extent_makes_other_sizes_unsupported(self):
        b = GemmBinding(spec("g", [tensor("A", "bf16", "M", 512), tensor("B", "bf16", 512, "N"),
                                   tensor("C", "bf16", "M", "N")], ["M", "N"]))
        b.check_shape(4096, 4096, 512)
        with self.assertRaisesRegex(Unsupported, "A.shape\\[1\\] = 512"):
            b.check_shape(4096, 4096, 4096)

    def test_unknown_scalar_and_missing_tensors_are_mismatches(self):
        with self.assertRaisesRegex(MetadataMismatch, "scalar 'gamma'"):
            GemmBinding(spec("g", [tensor("A", "bf16", "M", "K"), tensor("B", "bf16", "K", "N"),
                                   tensor("C", "bf16", "M", "N"), {"name": "gamma", "kind": "scalar",
                                                                   "dtype": "f32"}], ["M", "K", "N"]))
        with self.assertRaisesRegex(MetadataMismatch, "2 tensor parameters"):
            GemmBinding(spec("g", [tensor("A", "bf16", "M", "K"), tensor("B", "bf16", "K", "N")], ["M", "K", "N"]))


class GemmNtBindingTest(unittest.TestCase):
    """gemm_nt: C = A @ W^T, the Hopper kernel gemm_wgmma."""

    def test_w_is_n_by_k_and_passed_in_the_kernels_order(self):
        b = GemmBinding(KernelSpec(wgmma_spec_dict()), transposed_b=True)
        self.assertEqual((b.a.name, b.b.name, b.c.name), ("A", "W", "C"))
        self.assertEqual(b.args("a", "w", "c"), ["a", "w", "c"])
        self.assertIn("W=W(N, K)", b.describe())
        self.assertIn("TMA for A, W", b.describe())

    def test_tma_rows_need_k_a_multiple_of_8(self):
        b = GemmBinding(KernelSpec(wgmma_spec_dict()), transposed_b=True)
        b.check_shape(1000, 1003, 520)
        b.check_shape(1, 1, 8)
        with self.assertRaisesRegex(Unsupported, "copies A with TMA.*a row of 300 bf16 is 600"):
            b.check_shape(129, 257, 300)

    def test_a_store_map_is_no_row_requirement(self):
        # C's TMA stores are optional: the kernel stores a row of 1003 without them.
        d = wgmma_spec_dict()
        d["tensor_maps"].append({"param": "C", "box": [16, 64], "swizzle_bytes": 128, "store": True})
        b = GemmBinding(KernelSpec(d), transposed_b=True)
        b.check_shape(1000, 1003, 520)
        self.assertIn("TMA for A, W; TMA stores for C at its edges", b.describe())
        with self.assertRaisesRegex(Unsupported, "copies A with TMA"):
            b.check_shape(129, 257, 300)

    def test_the_form_must_match_the_kernel(self):
        with self.assertRaisesRegex(MetadataMismatch, "other form \\(C = A @ W\\^T"):
            GemmBinding(KernelSpec(wgmma_spec_dict()))
        nn = spec("gemm_tc", [tensor("A", "bf16", "M", "K"), tensor("B", "bf16", "K", "N"),
                              tensor("C", "bf16", "M", "N")], ["M", "N", "K"])
        with self.assertRaisesRegex(MetadataMismatch, "other form \\(C = A @ B"):
            GemmBinding(nn, transposed_b=True)

    def test_ragged_sizes_are_off_the_tiles_with_k_a_multiple_of_8(self):
        for quick in (False, True):
            ragged, timed = bench_gpu.gemm_nt_sizes(quick)
            self.assertEqual(timed, bench_gpu.gemm_sizes(quick)[1])
            tma_ok = [s for s in ragged if s[2] % 8 == 0]
            self.assertTrue(tma_ok)
            for m, n, k in tma_ok:
                self.assertTrue(m % 128 and n % 256 and k % 64, (m, n, k))
            # C by TMA stores (16-byte rows), clipped at the edges, and without them.
            self.assertTrue(any(n % 8 == 0 for _, n, _ in tma_ok) and any(n % 8 for _, n, _ in tma_ok))
        self.assertIn((4096, 4096, 512), bench_gpu.gemm_nt_sizes(False)[1])
        self.assertIn((8192, 8192, 8192), bench_gpu.gemm_nt_sizes(False)[1])

    def test_nn_ragged_sizes_have_tma_rows_and_one_n_a_case(self):
        """gemm_nn: TMA reads rows of A (K) and of B (N): multiples of 8 off the tiles, and one N that is not."""
        for quick in (False, True):
            ragged, timed = bench_gpu.gemm_nn_sizes(quick)
            self.assertEqual(timed, bench_gpu.gemm_sizes(quick)[1])
            tma_ok = [s for s in ragged if s[1] % 8 == 0 and s[2] % 8 == 0]
            self.assertTrue(tma_ok)
            self.assertTrue(any(m % 128 and n % 256 and k % 64 for m, n, k in tma_ok))
            self.assertEqual(len(ragged) - len(tma_ok), 1)
        self.assertIn("gemm_nn", bench_gpu.WORKLOADS)
        self.assertTrue(bench_gpu.is_gemm("gemm_nn"))
        self.assertEqual(bench_gpu.impls_for("gemm_nn"), ["argus", "cublas", "triton"])


class AttentionBindingTest(unittest.TestCase):
    def make(self, rank=4, scalars=(), constants=None, extra=()):
        dims = {4: ("B", "H", "S", 128), 3: ("BH", "S", 128)}[rank]
        params = [tensor(n, "bf16", *dims) for n in ("q", "k", "v", "o")] + list(extra) + \
            [{"name": s, "kind": "scalar", "dtype": t} for s, t in scalars]
        sizes = [d for d in dims if isinstance(d, str)]
        return AttentionBinding(spec("attention", params, sizes, constants))

    def test_rank_three_merges_batch_and_heads(self):
        b = self.make(rank=3)
        self.assertEqual(b.shape_for(4, 32, 4096, 128), (128, 4096, 128))
        self.assertEqual(b.sizes_for(4, 32, 4096, 128), {"BH": 128, "S": 4096})

    def test_head_size_and_causality_come_from_the_build(self):
        b = self.make()
        b.check_shape(1, 3, 1000, 128, False)
        with self.assertRaisesRegex(Unsupported, "compiled non-causal"):
            b.check_shape(1, 3, 1000, 128, True)
        with self.assertRaisesRegex(Unsupported, "shape\\[3\\] = 128"):
            b.check_shape(1, 3, 1000, 64, False)
        causal = self.make(constants={"CAUSAL": True})
        causal.check_shape(1, 3, 1000, 128, True)

    def test_scalars_scale_and_causal(self):
        b = self.make(scalars=[("sm_scale_log2", "f32"), ("causal", "bool")])
        b.check_shape(1, 1, 8, 128, True)
        args = b.args("q", "k", "v", "o", {}, 128, True)
        self.assertEqual(args[:4], ["q", "k", "v", "o"])
        self.assertAlmostEqual(args[4], 1.4426950408889634 / math.sqrt(128))
        self.assertIs(args[5], True)

    def test_scratch_tensors_take_extents_from_q(self):
        b = self.make(rank=3, extra=[tensor("lse", "f32", "BH", "S")])
        self.assertEqual(b.extra_shapes(2, 4, 100, 128), {"lse": ((8, 100), "f32")})
        bad = self.make(rank=3, extra=[tensor("lse", "f32", "T")])
        with self.assertRaises(Unsupported):
            bad.extra_shapes(2, 4, 100, 128)


class FakeWgmmaKernel:
    """Stands in for argus.load(...)["gemm_wgmma"]: C = A @ W^T, launched on the fake
    stream; `skip_last_row` plays a kernel whose ragged edge is wrong."""
    attributes = {"num_regs": 168, "local_size_bytes": 0}

    def __init__(self, skip_last_row=False):
        self.skip_last_row, self.calls = skip_last_row, []

    def plan(self, a, w, c):
        if a.shape[1] % 8:
            raise argus.ArgumentError("tensor 'A': its row of K bf16 elements is not a multiple of 16 bytes")

    def __call__(self, a, w, c):
        self.calls.append((a.shape, w.shape, c.shape))
        assert a.shape[1] == w.shape[1] and c.shape == (a.shape[0], w.shape[0]), "not C = A @ W^T"
        rows = a.shape[0] - 1 if self.skip_last_row else a.shape[0]

        def work():
            full = a @ w.t()
            for i in range(rows):
                for j in range(c.shape[1]):
                    c.storage[c.offset + i * c.stride(0) + j * c.stride(1)] = full.storage[i * c.shape[1] + j]
        fake_gpu.launch(work)


class WorkerOnFakeGpuTest(unittest.TestCase):
    """A whole gemm_nt worker group (checks, graph timing, re-check) on fake_gpu."""
    RAGGED, TIMED = [(5, 7, 24), (3, 9, 12)], [(4, 6, 16)]

    def run_group(self, group, kernel=None, write_wgmma=True):
        triton_seen = []

        def triton_matmul(a, b, out):
            triton_seen.append(b.stride())
            return fake_gpu.matmul(a, b, out)
        def triton_mma_sync(a, b, out):
            triton_seen.append(("mma.sync", b.stride()))
            return fake_gpu.matmul(a, b, out)
        fake_triton = types.SimpleNamespace(matmul=triton_matmul, best_config=lambda *size: "BLOCK_M=16",
                                            matmul_mma_sync=triton_mma_sync,
                                            best_config_mma_sync=lambda *size: "BLOCK_K=32")
        with tempfile.TemporaryDirectory() as d:
            if write_wgmma:
                with open(os.path.join(d, "gemm_wgmma.ptx"), "w") as f:
                    f.write("// fake\n")
                with open(os.path.join(d, "gemm_wgmma.meta.json"), "w") as f:
                    json.dump({"version": 1, "kernels": [wgmma_spec_dict()]}, f)
            args = argparse.Namespace(worker=group, ptx_dir=d, quick=True)
            with mock.patch.dict(sys.modules, {"torch": fake_gpu, "triton_gemm": fake_triton}), \
                    mock.patch.object(bench_gpu, "gemm_nt_sizes", lambda quick: (self.RAGGED, self.TIMED)), \
                    mock.patch.object(bench_gpu, "gemm_sizes", lambda quick: (self.RAGGED, self.TIMED)), \
                    mock.patch.object(argus, "load", lambda path: {"gemm_wgmma": kernel}):
                result = bench_gpu_worker.run(args)
        return result, triton_seen

    def rows(self, result):
        return {(r["impl"], tuple(r["size"]), r["phase"]): r for r in result["records"]}

    def test_argus_is_checked_at_ragged_sizes_then_graph_timed(self):
        kernel = FakeWgmmaKernel()
        result, _ = self.run_group("argus:gemm_nt", kernel)
        rows = self.rows(result)
        self.assertEqual(rows[("argus", (5, 7, 24), "check")]["status"], "ok")
        self.assertLess(rows[("argus", (5, 7, 24), "check")]["rel_error"], 1e-12)
        self.assertRegex(rows[("argus", (3, 9, 12), "check")]["status"], "^n/a: gemm_wgmma copies A with TMA")
        timed = rows[("argus", (4, 6, 16), "timed")]
        self.assertEqual((timed["status"], timed["timing"], timed["workload"]), ("ok", "graph", "gemm_nt"))
        self.assertEqual(timed["size_text"], "M=4 N=6 K=16")
        self.assertGreater(timed["tflops"], 0)
        self.assertIn(((5, 24), (7, 24), (5, 7)), kernel.calls)  # A (M, K), W (N, K), C (M, N)

    def test_a_wrong_ragged_edge_fails_and_is_never_timed(self):
        result, _ = self.run_group("argus:gemm_nt", FakeWgmmaKernel(skip_last_row=True))
        rows = self.rows(result)
        self.assertEqual(rows[("argus", (5, 7, 24), "check")]["status"], "FAIL")
        self.assertIn("outputs NaN", rows[("argus", (5, 7, 24), "check")]["why"])
        timed = rows[("argus", (4, 6, 16), "timed")]
        self.assertEqual(timed["status"], "FAIL")
        self.assertNotIn("ms", timed)

    def test_peers_get_the_same_w_through_its_transposed_view(self):
        result, triton_seen = self.run_group("peers:gemm_nt")
        rows = self.rows(result)
        for impl in ("cublas", "triton"):
            for size in self.RAGGED + self.TIMED:
                self.assertEqual(rows[(impl, size, "check")]["status"], "ok", (impl, size))
            self.assertEqual(rows[(impl, (4, 6, 16), "timed")]["timing"], "graph")
        self.assertIn((1, 24), triton_seen)  # b = W.t(): strides (1, K)
        self.assertEqual(rows[("triton", (4, 6, 16), "timed")]["config"], "BLOCK_M=16")
        self.assertTrue(any("B = W.t()" in n for n in result["notes"]), result["notes"])

    def test_without_the_ptx_argus_rows_say_not_built(self):
        result, _ = self.run_group("argus:gemm_nt", write_wgmma=False)
        self.assertEqual({r["status"] for r in result["records"]}, {"not built"})
        self.assertEqual(len(result["records"]), len(self.RAGGED) + 2 * len(self.TIMED))

    def test_the_a_at_b_gemm_workload_is_unchanged(self):
        result, triton_seen = self.run_group("peers:gemm", write_wgmma=False)
        rows = self.rows(result)
        self.assertEqual(rows[("cublas", (3, 9, 12), "check")]["status"], "ok")
        self.assertEqual(rows[("triton", (4, 6, 16), "timed")]["status"], "ok")
        self.assertIn((6, 1), triton_seen)  # B (K, N) row-major
        self.assertEqual(result["notes"], [])
        # gemm_tc's like-for-like peer: Triton's mma.sync build, checked and timed like the others
        self.assertIn(("mma.sync", (6, 1)), triton_seen)
        self.assertEqual(rows[("triton_mma", (3, 9, 12), "check")]["status"], "ok")
        timed = rows[("triton_mma", (4, 6, 16), "timed")]
        self.assertEqual((timed["status"], timed["config"]), ("ok", "BLOCK_K=32"))

    def test_only_the_a_at_b_workload_has_the_mma_sync_peer(self):
        result, triton_seen = self.run_group("peers:gemm_nt")
        self.assertNotIn("triton_mma", {r["impl"] for r in result["records"]})
        self.assertFalse(any(isinstance(x[0], str) for x in triton_seen))
        self.assertIn("triton_mma", bench_gpu.impls_for("gemm"))
        self.assertNotIn("triton_mma", bench_gpu.impls_for("gemm_nt"))

    def test_report_has_the_hopper_table_with_all_three(self):
        groups = [self.run_group("argus:gemm_nt", FakeWgmmaKernel())[0], self.run_group("peers:gemm_nt")[0]]
        doc = {"date": "d", "command": "c", "replays": 10, "environment": {"gpu": "G"}, "groups": groups}
        text = bench_gpu.markdown(doc)
        table = text.split("## bf16 GEMM, Hopper path (C = A @ W^T)\n")[1].split("##")[0]
        self.assertIn("| size | Argus TFLOP/s (ms) | cuBLAS (torch.matmul) TFLOP/s (ms) | Triton (autotuned) "
                      "TFLOP/s (ms) |", table)
        self.assertRegex(table, "\\| M=4 N=6 K=16 \\| \\*\\*\\d+\\*\\* \\(.*\\) \\| \\*\\*\\d+\\*\\* \\(.*\\) \\| "
                                "\\*\\*\\d+\\*\\* \\(.*\\) \\|")
        self.assertNotIn("## bf16 GEMM\n", text)  # no gemm (A @ B) records, no such table
        self.assertIn("| gemm_nt | Argus | M=3 N=9 K=12 | check | - | - | n/a: gemm_wgmma copies A with TMA", text)
        self.assertEqual(json.loads(json.dumps(doc)), doc)
        with tempfile.TemporaryDirectory() as d:
            why = bench_gpu.plot(doc, os.path.join(d, "p.png"))
            self.assertTrue(why is None or "no plot" in why)


def bias_gelu_spec_dict(names=("A", "B", "bias", "C"), bias_dims=("N",)):
    """gemm_bias_gelu's metadata as argusc writes it (examples/gemm_bias_gelu.ag), trimmed:
    the bias between B and C; TMA loads of A and B, TMA stores of C."""
    a, b, bias, c = names
    params = [tensor(a, "bf16", "M", "K"), tensor(b, "bf16", "K", "N")] + \
        ([tensor(bias, "bf16", *bias_dims)] if bias else []) + [tensor(c, "bf16", "M", "N")]
    return spec_dict("gemm_bias_gelu", params, ["M", "K", "N"],
                     {"BM": 128, "BN": 256, "BK": 64, "STAGES": 4, "GROUP": 8, "SMS": 132},
                     [{"param": a, "box": [128, 64], "swizzle_bytes": 128},
                      {"param": b, "box": [64, 64], "swizzle_bytes": 128},
                      {"param": c, "box": [16, 64], "swizzle_bytes": 128, "store": True}])


def write_bias_gelu_ptx(folder):
    with open(os.path.join(folder, "gemm_bias_gelu.ptx"), "w") as f:
        f.write("// fake\n")
    with open(os.path.join(folder, "gemm_bias_gelu.meta.json"), "w") as f:
        json.dump({"version": 1, "kernels": [bias_gelu_spec_dict()]}, f)


def gelu(v):
    return 0.5 * v * (1.0 + math.erf(v / math.sqrt(2.0)))


class GemmEpilogueTest(unittest.TestCase):
    """gemm_epilogue: C = gelu(A @ B + bias), the binding of gemm_bias_gelu and the plan (no GPU)."""

    def test_the_bias_is_passed_in_the_kernels_order(self):
        b = GemmBinding(KernelSpec(bias_gelu_spec_dict()), bias=True)
        self.assertEqual((b.a.name, b.b.name, b.bias.name, b.c.name), ("A", "B", "bias", "C"))
        self.assertEqual(b.args("a", "b", "c", "bias"), ["a", "b", "bias", "c"])
        self.assertIn("B=B(K, N) bias=bias(N) C=C(M, N) bf16; TMA for A, B; TMA stores for C", b.describe())

    def test_an_unnamed_bias_is_the_rank_1_tensor(self):
        b = GemmBinding(KernelSpec(bias_gelu_spec_dict(names=("x", "y", "v", "z"))), bias=True)
        self.assertEqual((b.a.name, b.b.name, b.bias.name, b.c.name), ("x", "y", "v", "z"))
        self.assertEqual(b.args("a", "b", "c", "bias"), ["a", "b", "bias", "c"])

    def test_tma_rows_need_k_and_n_multiples_of_8(self):
        b = GemmBinding(KernelSpec(bias_gelu_spec_dict()), bias=True)
        b.check_shape(1000, 1000, 520)
        b.check_shape(1, 8, 8)
        with self.assertRaisesRegex(Unsupported, "copies B with TMA.*a row of 1003 bf16 is 2006"):
            b.check_shape(1000, 1003, 520)
        const = GemmBinding(KernelSpec(bias_gelu_spec_dict(bias_dims=(256,))), bias=True)
        with self.assertRaisesRegex(Unsupported, "bias.shape\\[0\\] = 256"):
            const.check_shape(1000, 1000, 520)

    def test_a_bias_that_is_missing_or_not_along_n_is_a_mismatch(self):
        with self.assertRaisesRegex(MetadataMismatch, "bias bias\\(K\\) is not along C\\(M, N\\)'s columns"):
            GemmBinding(KernelSpec(bias_gelu_spec_dict(bias_dims=("K",))), bias=True)
        with self.assertRaisesRegex(MetadataMismatch, "0 rank-1 tensor parameters"):
            GemmBinding(KernelSpec(bias_gelu_spec_dict(names=("A", "B", None, "C"))), bias=True)
        with self.assertRaisesRegex(MetadataMismatch, "unexpected extra tensor 'bias'"):
            GemmBinding(KernelSpec(bias_gelu_spec_dict()))  # the plain GEMM binding does not drop it

    def test_sizes_flops_and_peers_are_gemm_nns_with_the_epilogue(self):
        self.assertIn("gemm_epilogue", bench_gpu.WORKLOADS)
        self.assertTrue(bench_gpu.is_gemm("gemm_epilogue"))
        for quick in (False, True):
            self.assertEqual(bench_gpu.sizes_of("gemm_epilogue", quick), bench_gpu.gemm_nn_sizes(quick))
        self.assertIn((8192, 8192, 8192), bench_gpu.sizes_of("gemm_epilogue", False)[1])
        self.assertIn((1000, 1003, 520), bench_gpu.sizes_of("gemm_epilogue", False)[0])
        self.assertEqual(bench_gpu.flops_of("gemm_epilogue", (4096, 4096, 512)), 2.0 * 4096 * 4096 * 512)
        self.assertEqual(bench_gpu.impls_for("gemm_epilogue"), ["argus", "torch_unfused", "triton_fused"])
        self.assertEqual(bench_gpu.LABELS["torch_unfused"], "torch (addmm + F.gelu)")
        self.assertEqual(bench_gpu.LABELS["triton_fused"], "Triton, fused epilogue (autotuned)")
        self.assertEqual(bench_gpu.ARGUS_FILES["gemm_epilogue"], [("gemm_bias_gelu.ptx", "gemm_bias_gelu")])

    def dry_run(self, folder, workloads):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            rc = bench_gpu.dry_run(argparse.Namespace(ptx_dir=folder, quick=False), workloads)
        return rc, out.getvalue()

    def test_dry_run_binds_the_bias_and_calls_n_1003_n_a(self):
        with tempfile.TemporaryDirectory() as d:
            write_bias_gelu_ptx(d)
            rc, out = self.dry_run(d, ["gemm_epilogue"])
        self.assertEqual(rc, 0, out)
        self.assertIn("Argus gemm_bias_gelu.ptx: built: gemm_bias_gelu(A: Tensor[bf16, (M, K)], B: Tensor[bf16, "
                      "(K, N)], bias: Tensor[bf16, (N,)], C: Tensor[bf16, (M, N)]): A=A(M, K) B=B(K, N) bias=bias(N)",
                      out)
        self.assertIn("M=1000 N=1003 K=520: n/a (gemm_bias_gelu copies B with TMA", out)
        self.assertEqual(out.count(": n/a"), 1, out)
        self.assertIn("peers: torch (addmm + F.gelu), Triton, fused epilogue (autotuned)", out)

    def test_the_default_dry_run_includes_it(self):
        with tempfile.TemporaryDirectory() as d:
            rc, out = self.dry_run(d, bench_gpu.WORKLOADS)
        self.assertEqual(rc, 0, out)
        self.assertIn("gemm_epilogue: checks at 8 sizes, timed at M=4096 N=4096 K=4096, M=8192 N=8192 K=8192, "
                      "M=4096 N=4096 K=512", out)
        self.assertIn("Argus gemm_bias_gelu.ptx: not built", out)


class FakeBiasGeluKernel:
    """Stands in for argus.load(...)["gemm_bias_gelu"]: C = epilogue(A @ B, bias) per element
    on the fake stream; the exact GELU of the sum unless a test gives a wrong epilogue."""
    attributes = {"num_regs": 168, "local_size_bytes": 0}

    def __init__(self, epilogue=lambda acc, bias: gelu(acc + bias)):
        self.epilogue, self.calls = epilogue, []

    def plan(self, a, b, bias, c):
        pass  # the binding's check_shape already calls the cases TMA cannot take n/a

    def __call__(self, a, b, bias, c):
        self.calls.append((a.shape, b.shape, bias.shape, c.shape))

        def work():
            acc, bias_values, n = (a @ b).values(), bias.values(), c.shape[1]
            c.copy_(fake_gpu.Tensor([self.epilogue(v, bias_values[i % n]) for i, v in enumerate(acc)],
                                    c.shape, c.dtype))
        fake_gpu.launch(work)


class EpilogueWorkerOnFakeGpuTest(unittest.TestCase):
    """The gemm_epilogue worker groups (checks, graph timing, re-check) on fake_gpu: the
    Argus kernel gets the bias, the peers compute the same, and the report compares Argus
    with the faster peer."""
    RAGGED, TIMED = [(5, 8, 24), (3, 9, 16)], [(4, 16, 8)]

    def run_group(self, group, kernel=None, write_ptx=True):
        triton_seen = []

        def triton_bias_gelu(a, b, bias, out):
            triton_seen.append(bias.shape)
            y = fake_gpu.nn.functional.gelu(fake_gpu.addmm(bias, a, b))
            fake_gpu.launch(lambda: out.copy_(y))
            return out
        fake_triton = types.SimpleNamespace(matmul_bias_gelu=triton_bias_gelu,
                                            best_config_bias_gelu=lambda *size: "BLOCK_N=16")
        with tempfile.TemporaryDirectory() as d:
            if write_ptx:
                write_bias_gelu_ptx(d)
            args = argparse.Namespace(worker=group, ptx_dir=d, quick=True)
            with mock.patch.dict(sys.modules, {"torch": fake_gpu, "triton_gemm": fake_triton}), \
                    mock.patch.object(bench_gpu, "gemm_nn_sizes", lambda quick: (self.RAGGED, self.TIMED)), \
                    mock.patch.object(argus, "load", lambda path: {"gemm_bias_gelu": kernel}):
                result = bench_gpu_worker.run(args)
        return result, triton_seen

    def rows(self, result):
        return {(r["impl"], tuple(r["size"]), r["phase"]): r for r in result["records"]}

    def test_argus_gets_the_bias_is_checked_then_graph_timed(self):
        kernel = FakeBiasGeluKernel()
        result, _ = self.run_group("argus:gemm_epilogue", kernel)
        rows = self.rows(result)
        check = rows[("argus", (5, 8, 24), "check")]
        self.assertEqual((check["status"], check["threshold"]), ("ok", 8e-3))
        self.assertLess(check["rel_error"], 1e-12)
        self.assertRegex(rows[("argus", (3, 9, 16), "check")]["status"], "^n/a: gemm_bias_gelu copies B with TMA")
        timed = rows[("argus", (4, 16, 8), "timed")]
        self.assertEqual((timed["status"], timed["timing"], timed["workload"]), ("ok", "graph", "gemm_epilogue"))
        self.assertAlmostEqual(timed["tflops"] * 1e12 * timed["ms"] * 1e-3, 2.0 * 4 * 16 * 8)  # 2MNK
        self.assertIn(((5, 24), (24, 8), (8,), (5, 8)), kernel.calls)  # A, B, bias, C
        self.assertTrue(any("bias=bias(N)" in n for n in result["notes"]), result["notes"])

    def test_a_wrong_epilogue_fails_and_is_never_timed(self):
        # A @ B + bias is about N(0, 2) (A scaled by 1/sqrt(K)): a ReLU in place of the GELU
        # is far off, as is a GELU without the bias.
        for name, epilogue in (("relu", lambda acc, bias: max(acc + bias, 0.0)),
                               ("no bias", lambda acc, bias: gelu(acc))):
            with self.subTest(name):
                rows = self.rows(self.run_group("argus:gemm_epilogue", FakeBiasGeluKernel(epilogue))[0])
                check = rows[("argus", (5, 8, 24), "check")]
                self.assertEqual(check["status"], "FAIL")
                self.assertIn("rel. error", check["why"])
                timed = rows[("argus", (4, 16, 8), "timed")]
                self.assertEqual(timed["status"], "FAIL")
                self.assertNotIn("ms", timed)

    def test_peers_torch_unfused_and_triton_fused_pass_every_size(self):
        result, triton_seen = self.run_group("peers:gemm_epilogue")
        rows = self.rows(result)
        for impl in ("torch_unfused", "triton_fused"):
            for size in self.RAGGED + self.TIMED:  # N = 9 too: the peers need no TMA rows
                self.assertEqual(rows[(impl, size, "check")]["status"], "ok", (impl, size))
            self.assertEqual(rows[(impl, (4, 16, 8), "timed")]["timing"], "graph")
        self.assertEqual(rows[("triton_fused", (4, 16, 8), "timed")]["config"], "BLOCK_N=16")
        self.assertIn((9,), triton_seen)
        self.assertEqual({r["impl"] for r in result["records"]}, {"torch_unfused", "triton_fused"})

    def test_without_the_ptx_argus_rows_say_not_built(self):
        result, _ = self.run_group("argus:gemm_epilogue", write_ptx=False)
        self.assertEqual({r["status"] for r in result["records"]}, {"not built"})

    def test_report_has_the_epilogue_table_with_the_speedup_over_the_best_peer(self):
        groups = [self.run_group("argus:gemm_epilogue", FakeBiasGeluKernel())[0],
                  self.run_group("peers:gemm_epilogue")[0]]
        doc = {"date": "d", "command": "c", "replays": 10, "environment": {"gpu": "G"}, "groups": groups}
        text = bench_gpu.markdown(doc)
        title = "## bf16 GEMM + bias + GELU, Hopper path (C = gelu(A @ B + bias), B stored (K, N))\n"
        table = text.split(title)[1].split("##")[0]
        self.assertIn("| size | Argus TFLOP/s (ms) | torch (addmm + F.gelu) TFLOP/s (ms) | Triton, fused epilogue "
                      "(autotuned) TFLOP/s (ms) | Argus / best peer |", table)
        self.assertRegex(table, "\\| M=4 N=16 K=8 \\| \\*\\*\\d+\\*\\* \\(.*\\) \\| "
                                "\\*\\*\\d+\\*\\* \\(.*\\) \\| \\*\\*\\d+\\*\\* \\(.*\\) \\| "
                                "x\\d+\\.\\d\\d \\((torch \\(addmm \\+ F.gelu\\)|Triton, fused epilogue "
                                "\\(autotuned\\))\\) \\|")
        self.assertIn("the epilogue is not counted", text)
        self.assertIn("| gemm_epilogue | Argus | M=3 N=9 K=16 | check | - | - | n/a: gemm_bias_gelu copies B", text)
        self.assertEqual(json.loads(json.dumps(doc)), doc)


def moe_spec_dict(bm=64, bn=128, warpgroups=1):
    """moe_gemm's metadata as argusc writes it (examples/moe_gemm.ag), trimmed."""
    return spec_dict("moe_gemm", [tensor("X", "bf16", "T", "K"), tensor("W", "bf16", "E", "N", "K"),
                                  tensor("block_expert", "i32", "NB"), tensor("Y", "bf16", "T", "N")],
                     ["T", "K", "E", "N", "NB"], {"BM": bm, "BN": bn, "BK": 64, "STAGES": 4, "WG": warpgroups},
                     [{"param": "X", "box": [bm, 64], "swizzle_bytes": 128},
                      {"param": "W", "box": [1, bn, 64], "swizzle_bytes": 128}])


class MoeLayoutTest(unittest.TestCase):
    """The routing and padding every MoE implementation shares (pure Python)."""

    def test_pairs_are_sorted_by_expert_and_padded_per_expert(self):
        for size in bench_gpu.moe_sizes(False)[0] + bench_gpu.moe_sizes(True)[1]:
            experts, topk, tokens, _, _, bm, padding = size
            layout = bench_gpu.moe_layout(size)
            self.assertEqual(layout.pairs, tokens * topk)
            self.assertTrue(all(c <= tokens for c in layout.counts))  # top-k experts are distinct
            self.assertEqual(layout.t_pad, len(layout.block_expert) * bm)
            self.assertEqual(layout.block_expert[len(layout.block_expert) - padding:], [-1] * padding)
            row = 0
            for e, first, count in layout.segments:
                self.assertEqual((first, count), (row, layout.counts[e]))
                blocks = layout.block_expert[first // bm:(first + count + bm - 1) // bm]
                self.assertEqual(set(blocks), {e})
                row += len(blocks) * bm
            self.assertEqual(row + padding * bm, layout.t_pad)
            self.assertIs(bench_gpu.moe_layout(list(size)), layout)  # prepared once per size

    def test_routing_is_fixed_by_the_seed(self):
        size = (8, 2, 37, 1003, 520, 64, 1)
        self.assertEqual(bench_gpu.MoeLayout(size).counts, bench_gpu.MoeLayout(size).counts)

    def test_ragged_cases_cover_empty_experts_padding_blocks_and_odd_k(self):
        ragged, timed = bench_gpu.moe_sizes(False)
        self.assertTrue(any(0 in bench_gpu.moe_layout(s).counts for s in ragged))
        self.assertTrue(any(s[6] for s in ragged))
        tma_ok = [s for s in ragged if s[4] % 8 == 0]
        self.assertTrue(tma_ok and all(s[4] % 64 and s[3] % 128 for s in tma_ok))
        self.assertTrue(any(s[3] % 8 == 0 for s in tma_ok) and any(s[3] % 8 for s in tma_ok))
        self.assertIn((8, 2, 8192, 14336, 4096, 128, 0), timed)  # Mixtral-like prefill
        self.assertIn((64, 6, 64, 2816, 2048, 64, 0), timed)  # DeepSeek-V2-Lite-like decode
        self.assertEqual(bench_gpu.flops_of("moe", (8, 2, 64, 14336, 4096, 64, 0)), 2.0 * 128 * 14336 * 4096)
        self.assertEqual(bench_gpu.size_text("moe", (8, 2, 37, 1003, 520, 64, 1)),
                         "E=8 top2 tokens=37 N=1003 K=520 BM=64 +1 pad")


class MoeBindingTest(unittest.TestCase):
    def test_operands_and_block_rows_come_from_the_metadata(self):
        b = MoeBinding(KernelSpec(moe_spec_dict()))
        self.assertEqual(b.block_rows, 64)
        self.assertEqual(b.args("x", "w", "be", "y"), ["x", "w", "be", "y"])
        self.assertIn("W=W(E, N, K)", b.describe())
        self.assertIn("BM=64; TMA for W, X", b.describe())
        b.check_shape(8, 2, 37, 1003, 520, 64, 1)

    def test_other_padding_and_unaligned_k_are_unsupported(self):
        b = MoeBinding(KernelSpec(moe_spec_dict()))
        with self.assertRaisesRegex(Unsupported, "compiled for BM=64, the case is padded to BM=128"):
            b.check_shape(8, 2, 300, 257, 72, 128, 1)
        with self.assertRaisesRegex(Unsupported, "copies X with TMA.*a row of 300 bf16 is 600"):
            b.check_shape(8, 2, 20, 100, 300, 64, 0)

    def test_parameters_that_do_not_look_like_a_grouped_gemm(self):
        bad = moe_spec_dict()
        bad["params"][2]["dtype"] = "f32"
        with self.assertRaisesRegex(MetadataMismatch, "block_expert' is f32, expected i32"):
            MoeBinding(KernelSpec(bad))
        flat = moe_spec_dict()
        flat["params"][1]["dims"] = flat["params"][1]["dims"][1:]
        flat["tensor_maps"] = []
        with self.assertRaisesRegex(MetadataMismatch, "'W' has rank 2, expected 3"):
            MoeBinding(KernelSpec(flat))


def fake_moe_launch(x, w, block_expert, y, bm, wrong_expert=False):
    """Y[block b] = X[block b] @ W[block_expert[b]]^T on the fake stream; padding blocks
    untouched. `wrong_expert` plays a kernel that always uses expert 0."""
    def work():
        for b, e in enumerate(block_expert.values()):
            if 0 <= e < w.shape[0]:
                rows = slice(b * bm, (b + 1) * bm)
                fake_gpu._matmul_into(x[rows], w[0 if wrong_expert else int(e)].t(), y[rows])
    fake_gpu.launch(work)
    return y


class FakeMoeKernel:
    """Stands in for argus.load(...)["moe_gemm"] of one build (its BM)."""
    attributes = {"num_regs": 90, "local_size_bytes": 0}

    def __init__(self, bm, wrong_expert=False):
        self.bm, self.wrong_expert, self.calls = bm, wrong_expert, []

    def plan(self, x, w, block_expert, y):
        if x.shape[1] % 8:
            raise argus.ArgumentError("tensor 'X': its row of K bf16 elements is not a multiple of 16 bytes")

    def __call__(self, x, w, block_expert, y):
        self.calls.append((x.shape, w.shape, block_expert.shape, y.shape))
        assert x.shape[0] == block_expert.shape[0] * self.bm, "a layout padded to another BM"
        fake_moe_launch(x, w, block_expert, y, self.bm, self.wrong_expert)


class MoeWorkerOnFakeGpuTest(unittest.TestCase):
    """The moe worker groups (checks, graph timing, re-check) on fake_gpu, with two
    Argus builds (BM = 4 and BM = 8) standing in for moe_gemm.ptx and moe_gemm_bm128.ptx."""
    # (E, topk, tokens, N, K, BM, padding blocks)
    RAGGED = [(4, 2, 5, 7, 24, 4, 1), (6, 2, 2, 5, 16, 8, 1), (4, 2, 3, 6, 12, 4, 0), (4, 1, 3, 6, 16, 16, 0)]
    TIMED = [(3, 2, 4, 6, 16, 4, 0)]

    def run_group(self, group, kernels=None, write_ptx=True):
        triton_calls = []

        def triton_moe_gemm(x, w, block_expert, y, bm):
            triton_calls.append(bm)
            return fake_moe_launch(x, w, block_expert, y, bm)
        fake_triton = types.SimpleNamespace(moe_gemm=triton_moe_gemm, best_config=lambda *size: "BLOCK_N=8")
        kernels = kernels or {}
        with tempfile.TemporaryDirectory() as d:
            if write_ptx:
                for file_name, bm in (("moe_gemm.ptx", 4), ("moe_gemm_bm128.ptx", 8)):
                    with open(os.path.join(d, file_name), "w") as f:
                        f.write("// fake\n")
                    with open(os.path.join(d, file_name.replace(".ptx", ".meta.json")), "w") as f:
                        json.dump({"version": 1, "kernels": [moe_spec_dict(bm=bm)]}, f)
            args = argparse.Namespace(worker=group, ptx_dir=d, quick=True)
            with mock.patch.dict(sys.modules, {"torch": fake_gpu, "triton_moe": fake_triton}), \
                    mock.patch.object(bench_gpu, "moe_sizes", lambda quick: (self.RAGGED, self.TIMED)), \
                    mock.patch.object(argus, "load", lambda path: {"moe_gemm": kernels[os.path.basename(path)]}):
                result = bench_gpu_worker.run(args)
        return result, triton_calls

    def rows(self, result):
        return {(r["impl"], tuple(r["size"]), r["phase"]): r for r in result["records"]}

    def kernels(self, wrong_expert=False):
        return {"moe_gemm.ptx": FakeMoeKernel(4, wrong_expert), "moe_gemm_bm128.ptx": FakeMoeKernel(8, wrong_expert)}

    def test_each_case_runs_on_the_build_of_its_padding_then_is_graph_timed(self):
        kernels = self.kernels()
        result, _ = self.run_group("argus:moe", kernels)
        rows = self.rows(result)
        for size in self.RAGGED[:2]:
            self.assertEqual(rows[("argus", size, "check")]["status"], "ok", size)
            self.assertLess(rows[("argus", size, "check")]["rel_error"], 1e-12)
        self.assertRegex(rows[("argus", self.RAGGED[2], "check")]["status"], "^n/a: moe_gemm copies X with TMA")
        self.assertRegex(rows[("argus", self.RAGGED[3], "check")]["status"], "^n/a: moe_gemm was compiled for BM=")
        timed = rows[("argus", self.TIMED[0], "timed")]
        self.assertEqual((timed["status"], timed["timing"], timed["workload"]), ("ok", "graph", "moe"))
        self.assertAlmostEqual(timed["tflops"] * 1e12 * timed["ms"] * 1e-3, 2.0 * 4 * 2 * 6 * 16)
        layout = bench_gpu.moe_layout(self.RAGGED[1])
        self.assertIn(((layout.t_pad, 16), (6, 5, 16), (layout.t_pad // 8,), (layout.t_pad, 5)),
                      kernels["moe_gemm_bm128.ptx"].calls)
        self.assertTrue(kernels["moe_gemm.ptx"].calls)

    def test_a_kernel_that_ignores_the_expert_fails_and_is_never_timed(self):
        result, _ = self.run_group("argus:moe", self.kernels(wrong_expert=True))
        rows = self.rows(result)
        self.assertEqual(rows[("argus", self.RAGGED[0], "check")]["status"], "FAIL")
        self.assertIn("rel. error", rows[("argus", self.RAGGED[0], "check")]["why"])
        timed = rows[("argus", self.TIMED[0], "timed")]
        self.assertEqual(timed["status"], "FAIL")
        self.assertNotIn("ms", timed)

    def test_peers_leave_padding_rows_alone_and_pass(self):
        result, triton_calls = self.run_group("peers:moe")
        rows = self.rows(result)
        for impl in ("torch_loop", "triton"):
            for size in self.RAGGED + self.TIMED:
                self.assertEqual(rows[(impl, size, "check")]["status"], "ok", (impl, size))
            self.assertEqual(rows[(impl, self.TIMED[0], "timed")]["timing"], "graph")
        self.assertEqual(rows[("triton", self.TIMED[0], "timed")]["config"], "BLOCK_N=8")
        self.assertIn(8, triton_calls)  # BLOCK_M is the case's padding

    def test_a_peer_that_skips_an_expert_fails(self):
        def partial_loop(self_, p, out):
            for e, first, count in p.layout.segments[1:]:
                fake_gpu.matmul(p.x[first:first + count], p.w[e].t(), out=out[first:first + count])
            return out
        with mock.patch.object(bench_gpu_worker.TorchMoeLoop, "run", partial_loop):
            result, _ = self.run_group("peers:moe")
        check = self.rows(result)[("torch_loop", self.RAGGED[0], "check")]
        self.assertEqual(check["status"], "FAIL")
        self.assertIn("outputs NaN", check["why"])

    def test_without_the_ptx_argus_rows_say_not_built(self):
        result, _ = self.run_group("argus:moe", write_ptx=False)
        self.assertEqual({r["status"] for r in result["records"]}, {"not built"})

    def test_report_has_the_moe_table_with_the_speedup_over_the_best_peer(self):
        groups = [self.run_group("argus:moe", self.kernels())[0], self.run_group("peers:moe")[0]]
        doc = {"date": "d", "command": "c", "replays": 10, "environment": {"gpu": "G"}, "groups": groups}
        text = bench_gpu.markdown(doc)
        table = text.split("## bf16 MoE grouped GEMM (Y = X @ W[e]^T per block of BM rows)\n")[1].split("##")[0]
        self.assertIn("| size | Argus TFLOP/s (ms) | torch, per-expert loop TFLOP/s (ms) | Triton (autotuned) "
                      "TFLOP/s (ms) | Argus / best peer |", table)
        self.assertRegex(table, "\\| E=3 top2 tokens=4 N=6 K=16 BM=4 \\| \\*\\*\\d+\\*\\* \\(.*\\) \\| "
                                "\\*\\*\\d+\\*\\* \\(.*\\) \\| \\*\\*\\d+\\*\\* \\(.*\\) \\| "
                                "x\\d+\\.\\d\\d \\((torch, per-expert loop|Triton \\(autotuned\\))\\) \\|")
        self.assertEqual(json.loads(json.dumps(doc)), doc)

    def test_speedup_cell(self):
        rec = lambda impl, ms: {"workload": "moe", "impl": impl, "size_text": "s", "phase": "timed",  # noqa: E731
                                "status": "ok", "ms": ms}
        impls = bench_gpu.MOE_IMPLS
        self.assertEqual(bench_gpu.speedup_cell([rec("argus", 1.0), rec("torch_loop", 3.0), rec("triton", 1.5)],
                                                "moe", "s", impls), "x1.50 (Triton (autotuned))")
        self.assertEqual(bench_gpu.speedup_cell([rec("torch_loop", 3.0)], "moe", "s", impls), "-")


class ReportTest(unittest.TestCase):
    def doc(self):
        rec = lambda impl, status, **kw: dict({"workload": "gemm", "impl": impl, "size": [8, 8, 8],  # noqa: E731
                                                "size_text": "M=8 N=8 K=8", "phase": "timed", "status": status}, **kw)
        return {"date": "d", "command": "c", "replays": 10, "environment": {"gpu": "G"},
                "groups": [{"group": "argus:gemm", "records": [rec("argus", "FAIL", why="rel. error 1")]},
                           {"group": "peers:gemm", "records": [rec("cublas", "ok", ms=0.5, tflops=700.0, rel_error=1e-3,
                                                                   ms_min=0.49, ms_max=0.6, timing="graph",
                                                                   replays=10, out_dtype="bf16"),
                                                               rec("triton", "not built")]}]}

    def test_markdown_shows_fail_and_not_built_and_never_times_a_failure(self):
        text = bench_gpu.markdown(self.doc())
        row = next(line for line in text.splitlines() if line.startswith("| M=8 N=8 K=8"))
        self.assertEqual(row, "| M=8 N=8 K=8 | FAIL | **700** (0.500 ms) | not built |")
        self.assertIn("| gemm | cuBLAS (torch.matmul) | M=8 N=8 K=8 | bf16 | 0.5000 | 0.4900 | 0.6000 | graph x10 | "
                      "700.0 |", text)
        self.assertNotIn("| gemm | Argus | M=8", text.split("## Timing detail")[1].split("## Every check")[0])

    def test_plot_writes_a_png_when_matplotlib_is_there(self):
        with tempfile.TemporaryDirectory() as d:
            why = bench_gpu.plot(self.doc(), os.path.join(d, "p.png"))
            if why is None:
                self.assertTrue(os.path.getsize(os.path.join(d, "p.png")) > 0)
            else:
                self.assertIn("no plot", why)

    def test_json_round_trip(self):
        self.assertEqual(json.loads(json.dumps(self.doc())), self.doc())


def row_spec_dict(name, block, warps, with_w=True, with_b=True):
    """layernorm_bf16's metadata as argusc writes it (examples/layernorm_bf16.ag), trimmed."""
    params = [tensor("x", "bf16", "M", "N")] + ([tensor("w", "bf16", "N")] if with_w else []) + \
        ([tensor("b", "bf16", "N")] if with_b else []) + [tensor("y", "bf16", "M", "N")] + \
        ([{"name": "eps", "kind": "scalar", "dtype": "f32"}] if with_w else [])
    d = spec_dict(name, params, ["M", "N"], {"BLOCK": block, "W": warps})
    d["warps"], d["threads"] = warps, 32 * warps
    return d


class RowKernelsTest(unittest.TestCase):
    """The bf16 row kernels' binding, sizes, build tags and report (no GPU)."""

    def test_binding_passes_x_w_b_y_eps_in_the_kernels_order(self):
        b = RowBinding(KernelSpec(row_spec_dict("layernorm_bf16", 4096, 8)), "layernorm")
        self.assertEqual(b.args("X", "Y", "W", "B", 1e-5), ["X", "W", "B", "Y", 1e-5])
        self.assertEqual(b.config(), "BLOCK=4096, warps=8")
        b.check_shape(7, 4096, 0)
        with self.assertRaises(Unsupported):
            b.check_shape(7, 4097, 0)

    def test_softmax_needs_no_vectors_and_norms_need_theirs(self):
        RowBinding(KernelSpec(row_spec_dict("softmax_bf16", 4096, 8, with_w=False, with_b=False)), "softmax")
        with self.assertRaises(MetadataMismatch):
            RowBinding(KernelSpec(row_spec_dict("softmax_bf16", 4096, 8, with_w=False, with_b=False)), "layernorm")

    def test_sizes_are_ragged_misaligned_and_the_issues_three(self):
        ragged, timed = bench_gpu.sizes_of("rmsnorm", False)
        self.assertEqual([s[:2] for s in timed], [(4096, 4096), (8192, 8192), (4096, 8192)])
        self.assertTrue(any(s[2] for s in ragged), "one case reads X off 16-byte alignment")
        self.assertTrue(any(s[1] % 8 for s in ragged), "rows that are not 16-byte multiples")
        self.assertEqual(bench_gpu.row_bytes("layernorm", (2, 8, 0)), 2.0 * (2 * 16 + 2 * 8))
        self.assertIsNone(bench_gpu.flops_of("softmax", (2, 8, 0)))

    def test_build_tags_pick_the_comparison_rows(self):
        self.assertIsNone(bench_gpu.row_tag("softmax_bf16_b4096_w8.ptx", "softmax_bf16"))
        self.assertIsNone(bench_gpu.row_tag("softmax_bf16.ptx", "softmax_bf16"))
        self.assertEqual(bench_gpu.row_tag("softmax_bf16_before_b4096_w8.ptx", "softmax_bf16"), "before")

    def test_report_gives_gb_per_s_and_the_ratio_to_each_peer(self):
        def rec(impl, ms):
            return {"workload": "softmax", "impl": impl, "size": [4, 8, 0], "size_text": "M=4 N=8", "phase": "timed",
                    "status": "ok", "ms": ms, "gbps": 128 / (ms * 1e6), "tflops": None}
        doc = {"date": "d", "command": "c", "replays": 10, "environment": {"gpu": "G"},
               "groups": [{"group": "argus:softmax", "records": [rec("argus", 0.01), rec("argus_before", 0.02)]},
                          {"group": "peers:softmax", "records": [rec("triton", 0.011), rec("torch", 0.03)]}]}
        table = bench_gpu.markdown(doc).split("## bf16 softmax along rows\n")[1].split("##")[0]
        self.assertIn("| Argus / Triton | Argus / torch | Argus / Argus before vec16 |", table)
        self.assertIn("| x1.10 | x3.00 | x2.00 |", table)
        self.assertIn("GB/s (ms)", table)


if __name__ == "__main__":
    unittest.main()

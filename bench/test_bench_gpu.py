"""Unit tests of bench_gpu.py's GPU-free parts: the metadata bindings of the Argus
kernels and the report. Run by ctest (bench_gpu_dry_run) or:
    python3 -m unittest discover -s bench -p 'test_bench_gpu.py' -v"""

import json
import math
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import bench_gpu  # noqa: E402
from argus.meta import KernelSpec  # noqa: E402
from bench_bindings import AttentionBinding, GemmBinding, MetadataMismatch, Unsupported  # noqa: E402


def tensor(name, dtype, *dims):
    return {"name": name, "kind": "tensor", "dtype": dtype,
            "dims": [{"const": d} if isinstance(d, int) else {"size": d} for d in dims]}


def spec(name, params, sizes, constants=None):
    params = params + [{"name": s, "kind": "size", "dtype": "i32"} for s in sizes]
    return KernelSpec({"name": name, "warps": 4, "threads": 128, "params": params, "sizes": sizes,
                       "grid": [{"const": 1}] * 3, "constants": constants or {}})


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


if __name__ == "__main__":
    unittest.main()

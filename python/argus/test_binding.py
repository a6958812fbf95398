"""Argument checks and launch planning against fake tensors (no GPU, no torch):
    cd python && python3 -m unittest argus.test_binding -v"""

import ctypes
import json
import math
import os
import tempfile
import unittest

from .binding import pack_scalar, plan_launch
from .errors import ArgumentError, MetadataError
from .meta import evaluate, metadata_path, parse_metadata, read_metadata


class FakeDevice:
    def __init__(self, type_, index):
        self.type, self.index = type_, index

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"


class FakeTensor:
    def __init__(self, shape, dtype="torch.float32", device=("cuda", 0), contiguous=True, ptr=0x1000):
        self.shape, self.dtype = tuple(shape), dtype
        self.device = FakeDevice(*device)
        self._contiguous, self._ptr = contiguous, ptr

    def is_contiguous(self):
        return self._contiguous

    def stride(self):
        return (1,) * len(self.shape)

    def data_ptr(self):
        return self._ptr


def size(n):
    return {"size": n}


def const(v):
    return {"const": v}


def op(name, *args):
    return {"op": name, "args": list(args)}


SOFTMAX = {
    "name": "softmax", "warps": 4, "threads": 128,
    "params": [
        {"name": "x", "kind": "tensor", "dtype": "f32", "dims": [size("M"), size("N")]},
        {"name": "y", "kind": "tensor", "dtype": "f32", "dims": [size("M"), size("N")]},
        {"name": "M", "kind": "size", "dtype": "i32"},
        {"name": "N", "kind": "size", "dtype": "i32"}],
    "sizes": ["M", "N"],
    "grid": [op("cdiv", size("M"), const(4)), const(1), const(1)],
    "grid_text": ["cdiv(M, 4)", "1", "1"],
    "requirements": [{"condition": op("le", size("N"), const(1024)), "condition_text": "N <= 1024",
                      "text": "a row must fit in one tile: N <= BN"}],
    "static_shared_bytes": 0, "constants": {"ROWS": 4, "BN": 1024},
}

GELU = {
    "name": "gelu", "warps": 4, "threads": 128,
    "params": [
        {"name": "x", "kind": "tensor", "dtype": "f32", "dims": [size("N")]},
        {"name": "w", "kind": "tensor", "dtype": "bf16", "dims": [const(64), size("N")]},
        {"name": "s", "kind": "scalar", "dtype": "f32"},
        {"name": "k", "kind": "scalar", "dtype": "i8"},
        {"name": "N", "kind": "size", "dtype": "i32"}],
    "sizes": ["N"],
    "grid": [op("cdiv", size("N"), const(1024)), const(1), const(1)],
    "grid_text": ["cdiv(N, 1024)", "1", "1"], "requirements": [], "static_shared_bytes": 0,
    "constants": {"BLOCK": 1024},
}


def spec_of(kernel):
    return parse_metadata(json.dumps({"version": 1, "kernels": [kernel]}))[0]


class LaunchExpressionTest(unittest.TestCase):
    def test_matches_c_semantics(self):
        self.assertEqual(evaluate(op("cdiv", size("N"), const(1024)), {"N": 2049}), 3)
        self.assertEqual(evaluate(op("cdiv", size("N"), const(1024)), {"N": 0}), 0)
        self.assertEqual(evaluate(op("floordiv", const(-7), const(2)), {}), -3)  # truncates
        self.assertEqual(evaluate(op("mod", const(-7), const(2)), {}), -1)
        self.assertEqual(evaluate(op("add", const(2**63 - 1), const(1)), {}), -2**63)  # wraps
        self.assertEqual(evaluate(op("and", op("le", size("N"), const(4)), op("not", const(0))), {"N": 4}), 1)
        self.assertEqual(evaluate(op("min", const(3), op("max", const(1), const(9))), {}), 3)
        with self.assertRaises(ZeroDivisionError):
            evaluate(op("mod", const(1), size("N")), {"N": 0})
        with self.assertRaises(MetadataError):
            evaluate(op("pow", const(1), const(2)), {})
        with self.assertRaises(MetadataError):
            evaluate(size("Q"), {})


class PlanTest(unittest.TestCase):
    def setUp(self):
        self.softmax = spec_of(SOFTMAX)
        self.gelu = spec_of(GELU)

    def test_sizes_grid_and_abi_order(self):
        x, y = FakeTensor((10, 1000), ptr=0x100), FakeTensor((10, 1000), ptr=0x200)
        plan = plan_launch(self.softmax, (x, y), {}, 0)
        self.assertEqual(plan.grid, (3, 1, 1))
        self.assertEqual(plan.block, (128, 1, 1))
        self.assertEqual(plan.sizes, {"M": 10, "N": 1000})
        self.assertEqual([v.value for v in plan.values], [0x100, 0x200, 10, 1000])
        self.assertIsInstance(plan.values[2], ctypes.c_int32)

    def test_keywords_and_scalars(self):
        x, w = FakeTensor((100,)), FakeTensor((64, 100), dtype="torch.bfloat16")
        plan = plan_launch(self.gelu, (x,), {"w": w, "s": 1.5, "k": -3}, 0)
        self.assertIsInstance(plan.values[2], ctypes.c_float)
        self.assertEqual(plan.values[2].value, 1.5)
        self.assertIsInstance(plan.values[3], ctypes.c_int8)
        self.assertEqual(plan.values[3].value, -3)
        self.assertEqual(plan.values[4].value, 100)

    def test_empty_tensor_gives_empty_plan(self):
        plan = plan_launch(self.softmax, (FakeTensor((0, 5)), FakeTensor((0, 5))), {}, 0)
        self.assertTrue(plan.empty)

    def assertArgError(self, spec, args, kwargs, *fragments):
        with self.assertRaises(ArgumentError) as ctx:
            plan_launch(spec, args, kwargs, 0)
        for f in fragments:
            self.assertIn(f, str(ctx.exception))

    def test_argument_count_and_names(self):
        x = FakeTensor((4, 4))
        self.assertArgError(self.softmax, (x,), {}, "missing argument 'y'", "softmax(x: Tensor[f32, (M, N)]")
        self.assertArgError(self.softmax, (x, x, x), {}, "takes 2 arguments")
        self.assertArgError(self.softmax, (x, x), {"N": 4}, "'N' is a runtime size")
        self.assertArgError(self.softmax, (x, x), {"BN": 4}, "-D BN=")
        self.assertArgError(self.softmax, (x,), {"x": x}, "twice")

    def test_tensor_checks(self):
        good = FakeTensor((4, 8))
        self.assertArgError(self.softmax, (good, 3.0), {}, "tensor 'y' of softmax expects a torch tensor", "float")
        self.assertArgError(self.softmax, (good, FakeTensor((4, 8), dtype="torch.float16")), {},
                            "expects dtype f32 (torch.float32), got torch.float16")
        self.assertArgError(self.softmax, (FakeTensor((4, 8), device=("cpu", None)), good), {},
                            "tensor 'x' of softmax is on cpu", ".cuda()")
        self.assertArgError(self.softmax, (FakeTensor((4, 8), device=("cuda", 1)), good), {}, "cuda:1")
        self.assertArgError(self.softmax, (FakeTensor((32,)), good), {}, "expects 2 dimensions", "(32,)")
        self.assertArgError(self.softmax, (FakeTensor((4, 8), contiguous=False), good), {}, "contiguous")
        self.assertArgError(self.softmax, (good, FakeTensor((4, 9))), {},
                            "size N is 8 from x.shape[1] but 9 from y.shape[1]")
        self.assertArgError(self.gelu, (FakeTensor((100,)), FakeTensor((32, 100), dtype="torch.bfloat16"), 1.0, 1),
                            {}, "dimension 0 must be 64", "got 32")
        self.assertArgError(self.softmax, (FakeTensor((1, 2**31)), FakeTensor((1, 2**31))), {}, "does not fit")

    def test_requirement(self):
        big = FakeTensor((2, 2000))
        self.assertArgError(self.softmax, (big, big), {}, "requirement failed: a row must fit in one tile",
                            "N <= 1024", "N=2000")

    def test_grid_limit(self):
        spec = spec_of(dict(SOFTMAX, grid=[const(1), size("M"), const(1)], requirements=[]))
        t = FakeTensor((70000, 4))
        self.assertArgError(spec, (t, t), {}, "grid axis 1", "65535")

    def test_scalars(self):
        p = self.gelu.params[2]
        self.assertEqual(pack_scalar("gelu", p, 2).value, 2.0)
        for bad, msg in [("1", "expects a number"), (True, "expects a number"), (1e39, "overflows f32")]:
            with self.assertRaises(ArgumentError) as ctx:
                pack_scalar("gelu", p, bad)
            self.assertIn(msg, str(ctx.exception))
        self.assertTrue(math.isinf(pack_scalar("gelu", p, float("inf")).value))
        k = self.gelu.params[3]
        for bad, msg in [(128, "outside the range [-128, 127]"), (1.0, "expects an integer"),
                         (None, "expects an integer")]:
            with self.assertRaises(ArgumentError) as ctx:
                pack_scalar("gelu", k, bad)
            self.assertIn(msg, str(ctx.exception))
        half = type(p)({"name": "h", "kind": "scalar", "dtype": "f16"}, "k")
        self.assertEqual(pack_scalar("k", half, 1.0).value, 0x3C00)
        bf = type(p)({"name": "h", "kind": "scalar", "dtype": "bf16"}, "k")
        self.assertEqual(pack_scalar("k", bf, 1.0).value, 0x3F80)
        self.assertEqual(pack_scalar("k", bf, 1.00390625).value, 0x3F80)  # tie rounds to even
        self.assertEqual(pack_scalar("k", bf, 1.01171875).value, 0x3F82)  # tie rounds to even (up)


class SharedMemoryTest(unittest.TestCase):
    def test_dynamic_shared_bytes(self):
        self.assertEqual(spec_of(SOFTMAX).dynamic_shared_bytes, 0)  # older metadata has no field
        big = dict(SOFTMAX, dynamic_shared_bytes=98304)
        self.assertEqual(spec_of(big).dynamic_shared_bytes, 98304)


class MetadataFileTest(unittest.TestCase):
    def test_paths_and_errors(self):
        self.assertEqual(metadata_path("a/b.ptx"), "a/b.meta.json")
        self.assertEqual(metadata_path("a/b.cubin"), "a/b.meta.json")
        with tempfile.TemporaryDirectory() as d:
            ptx = os.path.join(d, "k.ptx")
            with self.assertRaisesRegex(MetadataError, "cannot read the kernel metadata"):
                read_metadata(ptx)
            with open(os.path.join(d, "k.meta.json"), "w") as f:
                f.write("{not json")
            with self.assertRaisesRegex(MetadataError, "not valid JSON"):
                read_metadata(ptx)
            with open(os.path.join(d, "k.meta.json"), "w") as f:
                json.dump({"version": 99, "kernels": []}, f)
            with self.assertRaisesRegex(MetadataError, "version 99"):
                read_metadata(ptx)
            with open(os.path.join(d, "k.meta.json"), "w") as f:
                json.dump({"version": 1, "kernels": [{"name": "k"}]}, f)
            with self.assertRaisesRegex(MetadataError, "malformed kernel entry"):
                read_metadata(ptx)


if __name__ == "__main__":
    unittest.main()

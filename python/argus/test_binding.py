"""Argument checks and launch planning against fake tensors (no GPU, no torch):
    cd python && python3 -m unittest argus.test_binding -v"""

import ctypes
import json
import math
import os
import tempfile
import unittest

from . import cuda
from .binding import pack_scalar, plan_launch
from .errors import ArgumentError, CudaError, MetadataError
from .meta import evaluate, metadata_path, parse_metadata, read_metadata
from .plan_cache import PlanCache, call_key
from .tensor_map import MAP_BYTES, TensorMapArg, encode_tensor_maps, param_addresses, plan_tensor_map


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

    def test_a_kernel_of_clusters_needs_whole_clusters(self):
        spec = spec_of(dict(SOFTMAX, cluster=2))
        self.assertEqual(spec.cluster, 2)
        self.assertArgError(spec, (FakeTensor((12, 8)), FakeTensor((12, 8))), {}, "grid axis 0 = cdiv(M, 4) = 3",
                            "clusters of 2 blocks", "multiple of 2")
        with self.assertRaises(MetadataError):
            spec_of(dict(SOFTMAX, cluster=16))

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


# A kernel copying 64x64 tiles of A (bf16, 128-byte swizzle) and 8x16 tiles of
# the 3-D C (f32, no swizzle) with TMA, as driver/metadata.cpp writes it.
TMA = {
    "name": "tma", "warps": 4, "threads": 128,
    "params": [
        {"name": "A", "kind": "tensor", "dtype": "bf16", "dims": [size("M"), size("K")]},
        {"name": "C", "kind": "tensor", "dtype": "f32", "dims": [const(2), size("M"), size("K")]},
        {"name": "s", "kind": "scalar", "dtype": "f32"},
        {"name": "M", "kind": "size", "dtype": "i32"},
        {"name": "K", "kind": "size", "dtype": "i32"}],
    "sizes": ["M", "K"],
    "grid": [op("cdiv", size("M"), const(64)), const(1), const(1)],
    "tensor_maps": [{"param": "A", "box": [64, 64], "swizzle_bytes": 128},
                    {"param": "C", "box": [1, 8, 16], "swizzle_bytes": 0}],
}


class TensorMapTest(unittest.TestCase):
    def setUp(self):
        self.spec = spec_of(TMA)

    def tensors(self, m, k, a_ptr=0xA000, c_ptr=0xC000):
        return (FakeTensor((m, k), dtype="torch.bfloat16", ptr=a_ptr),
                FakeTensor((2, m, k), dtype="torch.float32", ptr=c_ptr))

    def test_metadata(self):
        self.assertEqual([(m.param, m.param_index, m.box, m.swizzle_bytes) for m in self.spec.tensor_maps],
                         [("A", 0, [64, 64], 128), ("C", 1, [1, 8, 16], 0)])
        self.assertEqual(spec_of(SOFTMAX).tensor_maps, [])  # older metadata has no key
        for maps, message in [([{"param": "s", "box": [1], "swizzle_bytes": 0}], "not a tensor parameter"),
                              ([{"param": "A", "box": [64], "swizzle_bytes": 0}], "box of 1 extents for 2"),
                              ([{"param": "A", "box": [64, 64], "swizzle_bytes": 16}], "swizzle_bytes 16"),
                              ([{"param": "A", "box": [64, 64]}], "malformed tensor map"),
                              ({"param": "A"}, "'tensor_maps' is not a list")]:
            with self.assertRaisesRegex(MetadataError, message):
                spec_of(dict(TMA, tensor_maps=maps))

    def test_plan_appends_maps_after_the_sizes(self):
        a, c = self.tensors(128, 64)
        plan = plan_launch(self.spec, (a, c, 1.0), {}, 0)
        self.assertEqual(len(plan.values), 7)
        self.assertEqual([v.value for v in plan.values[:2]], [0xA000, 0xC000])
        self.assertEqual([v.value for v in plan.values[3:5]], [128, 64])
        self.assertEqual(plan.values[5:], plan.tensor_maps)
        first, second = plan.tensor_maps
        self.assertIsInstance(first, TensorMapArg)
        e = first.encoding
        self.assertEqual((e.data_type, e.global_address), (9, 0xA000))  # CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
        self.assertEqual(e.global_dims, [64, 128])
        self.assertEqual(e.global_strides, [128])
        self.assertEqual(e.box_dims, [64, 64])
        self.assertEqual(e.element_strides, [1, 1])
        self.assertEqual((e.interleave, e.swizzle, e.l2_promotion, e.oob_fill), (0, 3, 2, 0))
        e = second.encoding
        self.assertEqual((e.data_type, e.global_address, e.swizzle), (7, 0xC000, 0))  # FLOAT32
        self.assertEqual(e.global_dims, [64, 128, 2])
        self.assertEqual(e.global_strides, [256, 32768])
        self.assertEqual(e.box_dims, [16, 8, 1])

    def test_maps_are_64_byte_aligned_and_reach_the_params(self):
        a, c = self.tensors(128, 64)
        plan = plan_launch(self.spec, (a, c, 1.0), {}, 0)
        seen = []

        def fake_encode(arg):
            seen.append(arg.encoding.global_address)
            ctypes.memmove(arg.address, bytes([len(seen)]) * MAP_BYTES, MAP_BYTES)

        encode_tensor_maps(plan, fake_encode)
        self.assertEqual(seen, [0xA000, 0xC000])
        addresses = param_addresses(plan.values)
        self.assertEqual(addresses[0], ctypes.addressof(plan.values[0]))
        for i, arg in enumerate(plan.tensor_maps):
            self.assertEqual(arg.address % 64, 0)
            self.assertEqual(addresses[5 + i], arg.address)
            self.assertEqual(ctypes.string_at(addresses[5 + i], MAP_BYTES), bytes([i + 1]) * MAP_BYTES)

    def test_cuda_encode_marshals_the_call(self):
        calls = []
        u32p, u64p = ctypes.POINTER(ctypes.c_uint32), ctypes.POINTER(ctypes.c_uint64)
        prototype = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_int, ctypes.c_uint32, ctypes.c_void_p,
                                     u64p, u64p, u32p, u32p, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int)

        def encode(map_ptr, dtype, rank, address, dims, strides, box, element_strides, interleave, swizzle,
                   l2, oob):
            calls.append((map_ptr % 64, dtype, rank, address, dims[:rank], strides[:rank - 1], box[:rank],
                          element_strides[:rank], interleave, swizzle, l2, oob))
            ctypes.memset(map_ptr, 0x5A, MAP_BYTES)
            return 1 if address == 0xBAD0 else 0

        callback = prototype(encode)
        saved, saved_name = cuda._encode_tiled, cuda.error_name
        cuda._encode_tiled = callback
        cuda.error_name = lambda code: ("CUDA_ERROR_INVALID_VALUE", "invalid argument")
        try:
            a, c = self.tensors(100, 64)
            plan = plan_launch(self.spec, (a, c, 1.0), {}, 0)
            cuda.encode_tensor_map(plan.tensor_maps[1], "tma, tensor 'C'")
            self.assertEqual(calls, [(0, 7, 3, 0xC000, [64, 100, 2], [256, 25600], [16, 8, 1], [1, 1, 1],
                                      0, 0, 2, 0)])
            self.assertEqual(plan.tensor_maps[1].raw(), b"\x5a" * MAP_BYTES)
            a, c = self.tensors(100, 64, a_ptr=0xBAD0)
            plan = plan_launch(self.spec, (a, c, 1.0), {}, 0)
            with self.assertRaises(CudaError) as ctx:
                cuda.encode_tensor_map(plan.tensor_maps[0], "tma, tensor 'A'")
            self.assertIn("cuTensorMapEncodeTiled(tma, tensor 'A') failed with CUDA_ERROR_INVALID_VALUE",
                          str(ctx.exception))
        finally:
            cuda._encode_tiled, cuda.error_name = saved, saved_name

    def assertTmaError(self, a_shape, fragment, a_ptr=0xA000):
        a = FakeTensor(a_shape, dtype="torch.bfloat16", ptr=a_ptr)
        c = FakeTensor((2,) + tuple(a_shape), dtype="torch.float32", ptr=0xC000)
        with self.assertRaises(ArgumentError) as ctx:
            plan_launch(self.spec, (a, c, 1.0), {}, 0)
        self.assertEqual(str(ctx.exception), fragment)

    def test_preconditions(self):
        self.assertTmaError((64, 100), "tma: tensor 'A': its row of K=100 bf16 elements is 200 bytes; TMA needs "
                                       "rows that are a multiple of 16 bytes (K a multiple of 8)")
        self.assertTmaError((64, 64), "tma: tensor 'A' starts at address 0xa008, which is not 16-byte aligned; "
                                      "TMA needs 16-byte aligned tensors (pass a tensor that starts at an aligned "
                                      "address, e.g. a fresh .contiguous() copy instead of a slice)", a_ptr=0xA008)
        with self.assertRaisesRegex(ArgumentError, "tiles of 512 elements along dimension 0"):
            plan_tensor_map("A", "bf16", (1024, 64), ["M", "K"], 0, [512, 64], 0)
        with self.assertRaisesRegex(ArgumentError, "rows are 128 bytes into a 64-byte swizzled buffer"):
            plan_tensor_map("A", "bf16", (64, 64), ["M", "K"], 0, [64, 64], 64)
        with self.assertRaisesRegex(ArgumentError, r"rows are 4 bf16 elements \(8 bytes\)"):
            plan_tensor_map("A", "bf16", (64, 64), ["M", "K"], 0, [64, 4], 0)
        with self.assertRaisesRegex(ArgumentError, r"its row of 6 f32 elements is 24 bytes.*\(a multiple of 4 "
                                                   r"elements\)"):
            plan_tensor_map("B", "f32", (64, 6), ["M", ""], 0, [8, 4], 0)
        with self.assertRaisesRegex(ArgumentError, r"an empty dimension \(M=0\)"):
            plan_tensor_map("A", "bf16", (0, 64), ["M", "K"], 0, [64, 64], 0)
        e = plan_tensor_map("q", "f8e4m3", (32, 64), ["M", ""], 0, [32, 32], 32)
        self.assertEqual((e.data_type, e.swizzle), (0, 1))  # UINT8, 32B

    def test_empty_launch_builds_no_maps(self):
        a, c = self.tensors(0, 64)
        plan = plan_launch(self.spec, (a, c, 1.0), {}, 0)
        self.assertTrue(plan.empty)
        self.assertEqual(plan.tensor_maps, [])


def with_store_maps(*store):
    """TMA with "store" set on its maps (the epilogue's TMA stores), one value per map."""
    maps = [dict(m, store=v) for m, v in zip(TMA["tensor_maps"], store)]
    return dict(TMA, tensor_maps=maps)


def marking_encoder(encoded):
    """A stand-in for cuda.encode_tensor_map: fills the map with one byte per call."""
    def encode(arg):
        encoded.append(arg.encoding.global_address)
        ctypes.memmove(arg.address, bytes([len(encoded)]) * MAP_BYTES, MAP_BYTES)
    return encode


class StoreTensorMapTest(unittest.TestCase):
    """Store maps ("store": true): what TMA cannot describe becomes 128 zero bytes."""

    def test_metadata(self):
        spec = spec_of(with_store_maps(True, False))
        self.assertEqual([m.store for m in spec.tensor_maps], [True, False])
        self.assertEqual([m.store for m in spec_of(TMA).tensor_maps], [False, False])  # absent: load maps
        for value in ["yes", 1, None]:
            with self.assertRaisesRegex(MetadataError, r"malformed tensor map .*'store' is .*, not true or false"):
                spec_of(with_store_maps(value, False))

    def test_store_map_tma_cannot_describe_is_zeros(self):
        store = spec_of(with_store_maps(True, False))
        for a_shape, a_ptr, reason in [((64, 100), 0xA000, "its row of K=100 bf16 elements is 200 bytes"),
                                       ((64, 64), 0xA008, "starts at address 0xa008, which is not 16-byte")]:
            a = FakeTensor(a_shape, dtype="torch.bfloat16", ptr=a_ptr)
            c = FakeTensor((2,) + a_shape, dtype="torch.float32", ptr=0xC000)
            plan = plan_launch(store, (a, c, 1.0), {}, 0)
            first, second = plan.tensor_maps
            self.assertIsNone(first.encoding)
            self.assertIn(reason, first.zero_reason)
            encoded = []
            encode_tensor_maps(plan, marking_encoder(encoded))
            self.assertEqual(encoded, [0xC000])  # A's map is never encoded
            self.assertEqual(first.raw(), bytes(MAP_BYTES))
            self.assertEqual(second.raw(), b"\x01" * MAP_BYTES)
            addresses = param_addresses(plan.values)
            self.assertEqual(addresses[5], first.address)
            self.assertEqual(first.address % 64, 0)
            # The same tensors through a load map still fail.
            with self.assertRaisesRegex(ArgumentError, reason):
                plan_launch(spec_of(TMA), (a, c, 1.0), {}, 0)

    def test_store_map_tma_can_describe_is_encoded(self):
        a = FakeTensor((128, 64), dtype="torch.bfloat16", ptr=0xA000)
        c = FakeTensor((2, 128, 64), dtype="torch.float32", ptr=0xC000)
        plan = plan_launch(spec_of(with_store_maps(True, True)), (a, c, 1.0), {}, 0)
        encoded = []
        encode_tensor_maps(plan, marking_encoder(encoded))
        self.assertEqual(encoded, [0xA000, 0xC000])
        self.assertEqual([m.raw() for m in plan.tensor_maps], [b"\x01" * MAP_BYTES, b"\x02" * MAP_BYTES])
        self.assertEqual([m.zero_reason for m in plan.tensor_maps], [None, None])

    def test_failed_encode_of_a_store_map_tma_can_describe_fails(self):
        # The kernel's own alignment test passes for this tensor, so it would read
        # the map: zeros there would be a fault, not a fallback.
        a = FakeTensor((128, 64), dtype="torch.bfloat16", ptr=0xA000)
        c = FakeTensor((2, 128, 64), dtype="torch.float32", ptr=0xC000)

        def failing_for_a(arg):
            if arg.encoding.global_address == 0xA000:
                raise CudaError("cuTensorMapEncodeTiled(tma, tensor 'A')", 1, "CUDA_ERROR_INVALID_VALUE",
                                "invalid argument")

        plan = plan_launch(spec_of(with_store_maps(True, False)), (a, c, 1.0), {}, 0)
        with self.assertRaises(CudaError):
            encode_tensor_maps(plan, failing_for_a)


class PlanCacheTest(unittest.TestCase):
    """A repeated call reuses its checked plan; anything plan_launch reads changes the key."""

    def test_key_follows_everything_the_plan_reads(self):
        x = FakeTensor((4, 8), ptr=0x1000)
        same = FakeTensor((4, 8), ptr=0x1000)
        base = call_key((x, 1.5), {"n": 3})
        self.assertIsNotNone(base)
        self.assertEqual(base, call_key((same, 1.5), {"n": 3}))
        variants = [((FakeTensor((4, 8), ptr=0x2000), 1.5), {"n": 3}),
                    ((FakeTensor((8, 4), ptr=0x1000), 1.5), {"n": 3}),
                    ((FakeTensor((4, 8), dtype="torch.float16", ptr=0x1000), 1.5), {"n": 3}),
                    ((FakeTensor((4, 8), contiguous=False, ptr=0x1000), 1.5), {"n": 3}),
                    ((x, 2.5), {"n": 3}), ((x, 1.5), {"n": 4}), ((x, 1.5), {"m": 3}), ((x, 1), {"n": 3})]
        for args, kwargs in variants:
            self.assertNotEqual(call_key(args, kwargs), base, (args, kwargs))
        # 0.0 and -0.0 compare equal but pack to different bits.
        self.assertNotEqual(call_key((x, 0.0), {}), call_key((x, -0.0), {}))
        # Keyword order does not matter; anything else (a list, a string) is never reused.
        self.assertEqual(call_key((), {"a": 1, "b": 2}), call_key((), {"b": 2, "a": 1}))
        self.assertIsNone(call_key((x, [1, 2]), {}))
        self.assertIsNone(call_key((x, "1.5"), {}))

    def test_least_recently_used_plans_leave_first(self):
        cache = PlanCache(capacity=2)
        cache.put("a", 1)
        cache.put("b", 2)
        self.assertEqual(cache.get("a"), 1)  # "b" is now the oldest
        cache.put("c", 3)
        self.assertEqual((cache.get("a"), cache.get("b"), cache.get("c"), len(cache)), (1, None, 3, 2))
        cache.put(None, 4)
        self.assertIsNone(cache.get(None))
        self.assertEqual(len(cache), 2)


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

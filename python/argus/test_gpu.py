"""The launcher on a real GPU (skipped without CUDA): loads the examples' PTX
(ARGUS_PTX_DIR, default build-gpu/ptx) and checks results and error paths.
    cd python && ARGUS_PTX_DIR=../build-gpu/ptx python3 -m unittest argus.test_gpu -v"""

import json
import math
import os
import shutil
import tempfile
import unittest

try:
    import torch
    HAVE_CUDA = torch.cuda.is_available()
except ImportError:
    HAVE_CUDA = False

import argus
from argus import cuda as cu

PTX_DIR = os.environ.get("ARGUS_PTX_DIR", os.path.join(os.path.dirname(__file__), "..", "..", "build-gpu", "ptx"))


@unittest.skipUnless(HAVE_CUDA, "needs torch with a CUDA device")
class GpuLaunchTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.vadd = argus.load(os.path.join(PTX_DIR, "vadd.ptx")).vadd
        cls.softmax = argus.load(os.path.join(PTX_DIR, "softmax.ptx")).softmax
        cls.gelu = argus.load(os.path.join(PTX_DIR, "gelu.ptx")).scale_bias_gelu

    def rand(self, *shape):
        return torch.randn(*shape, device="cuda")

    def test_vadd_ragged(self):
        for n in (1, 1023, 1025, 12345):
            x, y = self.rand(n), self.rand(n)
            out = torch.full((n,), float("nan"), device="cuda")
            self.vadd(x, y, out)
            torch.cuda.synchronize()
            self.assertTrue(torch.equal(out, x + y), n)

    def test_keywords_and_side_stream(self):
        x, y, out = self.rand(3000), self.rand(3000), torch.empty(3000, device="cuda")
        s = torch.cuda.Stream()
        with torch.cuda.stream(s):
            self.vadd(y=y, x=x, out=out)
        s.synchronize()
        self.assertTrue(torch.equal(out, x + y))
        out.fill_(float("nan"))
        self.vadd(x, y, out, stream=s)
        s.synchronize()
        self.assertTrue(torch.equal(out, x + y))

    def test_repeated_calls_reuse_plans_and_stay_correct(self):
        # The same tensors again (a reused plan), others at new addresses, another shape
        # and another scalar: every call computes its own result.
        xs = [(self.rand(n), self.rand(n)) for n in (1000, 1000, 2000)]
        for x, y in xs + xs[:1]:
            out = torch.full(x.shape, float("nan"), device="cuda")
            for _ in range(2):
                self.vadd(x, y, out)
            torch.cuda.synchronize()
            self.assertTrue(torch.equal(out, x + y))
        x, b, y = self.rand(5000), self.rand(5000), torch.empty(5000, device="cuda")
        for scale in (1.25, 1.25, 0.5):
            self.gelu(x, b, y, scale)
            v = x.double() * scale + b.double()
            ref = 0.5 * v * (1 + torch.erf(v / math.sqrt(2)))
            self.assertLess(float((y.double() - ref).norm() / ref.norm()), 1e-6, scale)

    def test_gelu_scalar(self):
        x, b, y = self.rand(5000), self.rand(5000), torch.empty(5000, device="cuda")
        self.gelu(x, b, y, 1.25)
        v = x.double() * 1.25 + b.double()
        ref = 0.5 * v * (1 + torch.erf(v / math.sqrt(2)))
        self.assertLess(float((y.double() - ref).norm() / ref.norm()), 1e-6)

    def test_empty_tensor_is_a_no_op(self):
        e = torch.empty(0, device="cuda")
        self.vadd(e, e, e)
        torch.cuda.synchronize()

    def test_argument_errors(self):
        x = self.rand(100)
        with self.assertRaisesRegex(argus.ArgumentError, "dtype f32"):
            self.vadd(x, x.double(), x)
        with self.assertRaisesRegex(argus.ArgumentError, "is on cpu"):
            self.vadd(x, x.cpu(), x)
        with self.assertRaisesRegex(argus.ArgumentError, "contiguous"):
            m = self.rand(8, 8).t()
            self.softmax(m, m)
        with self.assertRaisesRegex(argus.ArgumentError, "size N is 100"):
            self.vadd(x, self.rand(99), x)
        with self.assertRaisesRegex(argus.ArgumentError, "requirement failed"):
            big = self.rand(2, 2000)
            self.softmax(big, big)
        with self.assertRaisesRegex(argus.ArgumentError, "scalar 's'"):
            self.gelu(x, x, x, "1.0")
        torch.cuda.synchronize()  # nothing was launched, nothing broke

    def test_driver_errors_are_exceptions(self):
        plan = self.vadd.plan(self.rand(10), self.rand(10), self.rand(10))
        with self.assertRaises(argus.CudaError) as ctx:
            cu.launch(self.vadd._function, (1, 1, 1), (2048, 1, 1), 0, plan.values, "vadd")
        self.assertEqual(ctx.exception.name, "CUDA_ERROR_INVALID_VALUE")
        torch.cuda.synchronize()

    def test_bad_files(self):
        with tempfile.TemporaryDirectory() as d:
            with self.assertRaisesRegex(argus.MetadataError, "cannot read the kernel metadata"):
                argus.load(os.path.join(d, "none.ptx"))
            shutil.copy(os.path.join(PTX_DIR, "vadd.meta.json"), os.path.join(d, "bad.meta.json"))
            with open(os.path.join(d, "bad.ptx"), "w") as f:
                f.write(".version 7.8\n.target sm_90\n.address_size 64\nthis is not ptx\n")
            with self.assertRaises(argus.CudaError) as ctx:
                argus.load(os.path.join(d, "bad.ptx"))
            self.assertEqual(ctx.exception.name, "CUDA_ERROR_INVALID_PTX")
            with open(os.path.join(PTX_DIR, "vadd.meta.json")) as f:
                meta = json.load(f)
            meta["kernels"][0]["name"] = "not_there"
            shutil.copy(os.path.join(PTX_DIR, "vadd.ptx"), os.path.join(d, "renamed.ptx"))
            with open(os.path.join(d, "renamed.meta.json"), "w") as f:
                json.dump(meta, f)
            with self.assertRaises(argus.CudaError) as ctx:
                argus.load(os.path.join(d, "renamed.ptx"))
            self.assertEqual(ctx.exception.name, "CUDA_ERROR_NOT_FOUND")
        torch.cuda.synchronize()


if __name__ == "__main__":
    unittest.main()

"""argus.jit without a GPU: the source scan, cache keys, how argusc is found and
invoked (a stand-in compiler that logs its arguments), the disk cache, the error
messages; with the real argusc ($ARGUSC, or the repository's build/argusc) also a
real compilation. The launch itself needs a GPU: test_gpu.py.
    cd python && ARGUSC=../build/argusc python3 -m unittest argus.test_jit -v"""

import json
import os
import stat
import sys
import tempfile
import textwrap
import unittest

from . import compiler, source_scan
from .binding import bind_arguments
from .compiler import CompileError, CompilerNotFoundError
from .errors import ArgumentError, ArgusError
from .jit import jit
from .meta import parse_metadata

REPO = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
VADD = os.path.join(REPO, "examples", "vadd.ag")

TWO_KERNELS = textwrap.dedent("""\
    # arch: sm_90a
    @kernel(grid=(cdiv(N, BLOCK),),
            warps=4)
    def scale(x: Tensor[f32, (N,)],  # the input
              out: Tensor[f32, (N,)], s: f32 = 2.0, BLOCK: const = 1024,
              SPLIT: const):
        pass

    @kernel(grid=(M,))
    def rows(x: Tensor[bf16, (M, K)], eps: f32, ROW: const = min(4, 8)):
        pass
    """)

# A stand-in argusc: logs its arguments, then writes kernel.ptx and kernel.meta.json
# (or fails like argusc does when the source holds the word BROKEN).
FAKE_ARGUSC = textwrap.dedent("""\
    #!{python}
    import json, os, sys
    args = sys.argv[1:]
    if args == ["--version"]:
        print("argusc version 0.0-fake"); sys.exit(0)
    with open(os.environ["FAKE_ARGUSC_LOG"], "a") as log:
        log.write(json.dumps(args) + "\\n")
    source = args[args.index("-o") - 1]
    if "BROKEN" in open(source).read():
        sys.stderr.write(source + ":2:5: error: AG1001: something is wrong\\n"); sys.exit(1)
    out = args[args.index("-o") + 1]
    open(out, "w").write("// fake PTX\\n")
    open(out[:-4] + ".meta.json", "w").write("{{}}")
    """)


def real_argusc():
    """The real compiler for the tests that compile: $ARGUSC or the repository's build."""
    for candidate in (os.environ.get("ARGUSC"), os.path.join(REPO, "build", "argusc")):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


class SourceScanTest(unittest.TestCase):
    def test_finds_kernels_constants_and_defaults(self):
        found = source_scan.kernels(TWO_KERNELS)
        self.assertEqual(list(found), ["scale", "rows"])
        scale = {p.name: (p.kind, p.has_default) for p in found["scale"]}
        self.assertEqual(scale, {"x": ("tensor", False), "out": ("tensor", False), "s": ("scalar", True),
                                 "BLOCK": ("const", True), "SPLIT": ("const", False)})
        rows = {p.name: (p.kind, p.has_default) for p in found["rows"]}
        self.assertEqual(rows, {"x": ("tensor", False), "eps": ("scalar", False), "ROW": ("const", True)})

    def test_the_example(self):
        with open(VADD) as f:
            found = source_scan.kernels(f.read())
        self.assertEqual([(p.name, p.kind) for p in found["vadd"]],
                         [("x", "tensor"), ("y", "tensor"), ("out", "tensor"), ("BLOCK", "const")])

    def test_arch(self):
        self.assertEqual(source_scan.declared_arch(TWO_KERNELS), "sm_90a")
        self.assertIsNone(source_scan.declared_arch("@kernel(grid=(1,))\ndef k():\n    pass\n"))
        self.assertTrue(source_scan.arch_runs("sm_90a", "sm_90"))
        self.assertFalse(source_scan.arch_runs("sm_90", "sm_90a"))
        self.assertFalse(source_scan.arch_runs("sm_80", "sm_90"))
        self.assertEqual(source_scan.arch_for_capability(9, 0), "sm_90a")
        self.assertEqual(source_scan.arch_for_capability(8, 6), "sm_80")
        self.assertEqual(source_scan.arch_for_capability(10, 0), "sm_90")
        self.assertIsNone(source_scan.arch_for_capability(7, 5))


class CacheKeyTest(unittest.TestCase):
    def test_every_part_changes_the_key(self):
        base = compiler.cache_key("src", {"BLOCK": 1024}, "sm_90", "argusc 0.1.0")
        self.assertEqual(base, compiler.cache_key("src", {"BLOCK": 1024}, "sm_90", "argusc 0.1.0"))
        self.assertNotEqual(base, compiler.cache_key("src ", {"BLOCK": 1024}, "sm_90", "argusc 0.1.0"))
        self.assertNotEqual(base, compiler.cache_key("src", {"BLOCK": 512}, "sm_90", "argusc 0.1.0"))
        self.assertNotEqual(base, compiler.cache_key("src", {"BLOCK": 1024}, "sm_90a", "argusc 0.1.0"))
        self.assertNotEqual(base, compiler.cache_key("src", {"BLOCK": 1024}, "sm_90", "argusc 0.1.1"))
        self.assertNotEqual(base, compiler.cache_key("src", {}, "sm_90", "argusc 0.1.0"))

    def test_constant_order_and_spelling(self):
        a = compiler.cache_key("s", {"A": 1, "B": True}, "sm_90", "c")
        self.assertEqual(a, compiler.cache_key("s", {"B": True, "A": 1}, "sm_90", "c"))
        # 1 and True are different constants for argusc (an int and a bool).
        self.assertNotEqual(a, compiler.cache_key("s", {"A": True, "B": True}, "sm_90", "c"))

    def test_define_text(self):
        self.assertEqual(compiler.define_text("B", 1024), "1024")
        self.assertEqual(compiler.define_text("B", True), "True")
        self.assertEqual(compiler.define_text("S", 0.1), "0.1")
        self.assertEqual(compiler.define_text("S", 1e-5), "1e-05")
        with self.assertRaisesRegex(ArgusError, r"constant B='x': a const parameter takes an int, a float or a bool"):
            compiler.define_text("B", "x")


class FindArguscTest(unittest.TestCase):
    def test_no_compiler_anywhere(self):
        with self.assertRaises(CompilerNotFoundError) as e:
            compiler.find_argusc(env={"PATH": ""}, repo_build="/nonexistent/build/argusc")
        message = str(e.exception)
        self.assertIn("none was found (not in $ARGUSC, which is unset; not on PATH; not at /nonexistent/build/argusc)",
                      message)
        self.assertIn("bash scripts/main.sh", message)
        self.assertIn("argus.load('kernel.ptx')", message)

    def test_argusc_variable_wins_and_is_checked(self):
        with self.assertRaisesRegex(CompilerNotFoundError, r"ARGUSC=/nonexistent/argusc is not an executable file"):
            compiler.find_argusc(env={"ARGUSC": "/nonexistent/argusc", "PATH": ""})
        with tempfile.TemporaryDirectory() as d:
            exe = os.path.join(d, "argusc")
            with open(exe, "w") as f:
                f.write("#!/bin/sh\n")
            os.chmod(exe, 0o755)
            self.assertEqual(compiler.find_argusc(env={"ARGUSC": exe, "PATH": ""}), exe)
            self.assertEqual(compiler.find_argusc(env={"PATH": d}, repo_build="/nonexistent"), exe)

    def test_a_call_without_compiler_says_so(self):
        with open(VADD) as f:
            kernel = jit(source=f.read(), arch="sm_90", argusc=None)
        old = dict(os.environ)
        try:
            os.environ["ARGUSC"] = "/nonexistent/argusc"
            with self.assertRaisesRegex(CompilerNotFoundError, "ARGUSC=/nonexistent/argusc"):
                kernel(object(), object(), object(), BLOCK=256)
        finally:
            os.environ.clear()
            os.environ.update(old)


class FakeCompilerTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.argusc = os.path.join(self.dir.name, "argusc")
        with open(self.argusc, "w") as f:
            f.write(FAKE_ARGUSC.format(python=sys.executable))
        os.chmod(self.argusc, os.stat(self.argusc).st_mode | stat.S_IEXEC)
        self.log = os.path.join(self.dir.name, "log")
        os.environ["FAKE_ARGUSC_LOG"] = self.log
        self.cache = os.path.join(self.dir.name, "cache")

    def tearDown(self):
        self.dir.cleanup()

    def calls(self):
        if not os.path.exists(self.log):
            return []
        with open(self.log) as f:
            return [json.loads(line) for line in f]

    def kernel(self, source=TWO_KERNELS, name=None):
        return jit(source=source, kernel=name, arch="sm_90a", cache_dir=self.cache, argusc=self.argusc)

    def test_invocation_and_disk_cache(self):
        k = self.kernel()
        path = k.ptx_path("sm_90a", SPLIT=2, BLOCK=256)
        self.assertTrue(path.startswith(self.cache) and path.endswith("kernel.ptx"), path)
        self.assertTrue(os.path.isfile(path[:-4] + ".meta.json"))
        (args,) = self.calls()
        self.assertEqual(args[:5], ["--arch=sm_90a", "--color=never", "-DBLOCK=256", "-DSPLIT=2",
                                    os.path.join(os.path.dirname(args[-1]), "kernel.ag")])
        self.assertEqual(args[5], "-o")
        # The same constants again, from a fresh JITKernel (a new process would do the same): no compile.
        self.assertEqual(self.kernel().ptx_path("sm_90a", BLOCK=256, SPLIT=2), path)
        self.assertEqual(len(self.calls()), 1)
        # Other constants, another arch or another source compile again.
        self.kernel().ptx_path("sm_90a", BLOCK=512, SPLIT=2)
        self.kernel(TWO_KERNELS + "\n").ptx_path("sm_90a", BLOCK=256, SPLIT=2)
        self.assertEqual(len(self.calls()), 3)
        with open(os.path.join(os.path.dirname(path), "key.json")) as f:
            key = json.load(f)
        self.assertEqual(key["constants"], {"SPLIT": "2", "BLOCK": "256"})
        self.assertIn("argusc version 0.0-fake", key["compiler"])
        self.assertEqual(k.compilations, 1)

    def test_compile_errors_name_the_source(self):
        k = self.kernel(TWO_KERNELS.replace("pass", "BROKEN", 1))
        with self.assertRaises(CompileError) as e:
            k.ptx_path("sm_90a", SPLIT=1)
        self.assertEqual(str(e.exception),
                         "argusc could not compile <source> (SPLIT=1, sm_90a); it said:\n"
                         "<source>:2:5: error: AG1001: something is wrong")
        self.assertEqual([n for n in os.listdir(self.cache)], [], "a failed compile leaves nothing in the cache")

    def test_constants_as_keywords(self):
        k = self.kernel()
        consts, runtime = k.split_arguments({"BLOCK": 128, "SPLIT": 2, "s": 1.5, "stream": None})
        self.assertEqual(consts, {"BLOCK": 128, "SPLIT": 2})
        self.assertEqual(runtime, {"s": 1.5, "stream": None})
        with self.assertRaisesRegex(ArgumentError, r"scale\(\) needs the constant SPLIT as keyword "
                                                   r"\(e.g. SPLIT=1024\): it has no default"):
            k.split_arguments({"BLOCK": 128})

    def test_kernel_choice_and_arch_line(self):
        self.assertEqual(self.kernel().name, "scale")
        self.assertEqual(self.kernel(name="rows").name, "rows")
        with self.assertRaisesRegex(ArgusError, r"<source> has no kernel 'nope' \(kernels: scale, rows\)"):
            self.kernel(name="nope")
        with self.assertRaisesRegex(ArgusError, r"<source> says '# arch: sm_90a', which sm_80 does not have"):
            self.kernel().ptx_path("sm_80", SPLIT=1)
        with self.assertRaisesRegex(ArgusError, "defines no @kernel"):
            self.kernel("x = 1\n")
        with self.assertRaisesRegex(ArgusError, "a .ag file path or source=TEXT"):
            jit()


class ScalarDefaultTest(unittest.TestCase):
    def test_a_declared_default_fills_a_missing_scalar(self):
        spec = parse_metadata(json.dumps({"version": 1, "kernels": [{
            "name": "k", "warps": 1, "threads": 32, "sizes": [], "grid": [{"const": 1}] * 3,
            "params": [{"name": "eps", "kind": "scalar", "dtype": "f32", "default": 1e-5},
                       {"name": "n", "kind": "scalar", "dtype": "i32"}]}]}))[0]
        self.assertEqual(bind_arguments(spec, (), {"n": 3}), {"n": 3, "eps": 1e-5})
        self.assertEqual(bind_arguments(spec, (0.5, 3), {}), {"eps": 0.5, "n": 3})
        with self.assertRaisesRegex(ArgumentError, r"missing argument 'n'; signature: k\(eps: f32 = 1e-05, n: i32\)"):
            bind_arguments(spec, (), {})


@unittest.skipUnless(real_argusc(), "no argusc built (set ARGUSC or build build/argusc): real compilations skipped")
class RealCompilerTest(unittest.TestCase):
    def test_vadd_per_block_size(self):
        with tempfile.TemporaryDirectory() as cache:
            k = jit(VADD, cache_dir=cache, argusc=real_argusc())
            p256 = k.ptx_path("sm_90", BLOCK=256)
            p1024 = k.ptx_path("sm_90")
            self.assertNotEqual(p256, p1024)
            with open(p256[:-4] + ".meta.json") as f:
                spec = parse_metadata(f.read())[0]
            self.assertEqual((spec.name, spec.constants), ("vadd", {"BLOCK": 256}))
            with open(p256) as f:
                self.assertIn(".target sm_90", f.read())
            k.ptx_path("sm_90", BLOCK=256)
            self.assertEqual(k.compilations, 2)

    def test_real_diagnostics(self):
        with tempfile.TemporaryDirectory() as cache:
            k = jit(source="@kernel(grid=(1,))\ndef k(x: Tensor[f32, (N,)], B: const = 4):\n    y = undefined_name\n",
                    cache_dir=cache, argusc=real_argusc())
            with self.assertRaises(CompileError) as e:
                k.ptx_path("sm_90")
            self.assertIn("<source>:3:9: error", str(e.exception))
            self.assertIn("undefined_name", str(e.exception))


if __name__ == "__main__":
    unittest.main()

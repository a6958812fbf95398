"""Argus host runtime: load compiled kernels (PTX/cubin + .meta.json written by
argusc) into torch's CUDA context and launch them on torch tensors, or compile
them at call time (argus.jit, which runs argusc and caches what it wrote).

    import argus
    mod = argus.load("build/vadd.ptx")
    mod.vadd(x, y, out)            # sizes come from the tensors' shapes

    vadd = argus.jit("examples/vadd.ag")
    vadd(x, y, out, BLOCK=256)     # compiled for BLOCK=256 on first call, then cached
"""

from .compiler import CompileError, CompilerNotFoundError
from .errors import ArgumentError, ArgusError, CudaError, MetadataError
from .jit import JITKernel, jit
from .module import Kernel, Module, load

__all__ = ["load", "jit", "Module", "Kernel", "JITKernel", "ArgusError", "ArgumentError", "CudaError",
           "MetadataError", "CompileError", "CompilerNotFoundError"]

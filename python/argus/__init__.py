"""Argus host runtime: load compiled kernels (PTX/cubin + .meta.json written by
argusc) into torch's CUDA context and launch them on torch tensors.

    import argus
    mod = argus.load("build/vadd.ptx")
    mod.vadd(x, y, out)            # sizes come from the tensors' shapes
"""

from .errors import ArgumentError, ArgusError, CudaError, MetadataError
from .module import Kernel, Module, load

__all__ = ["load", "Module", "Kernel", "ArgusError", "ArgumentError", "CudaError", "MetadataError"]

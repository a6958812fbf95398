"""argus.jit: a kernel compiled by argusc when it is first called with a set of
constants, then cached (in memory and on disk, see compiler.py).

    vadd = argus.jit("examples/vadd.ag")          # or argus.jit(source=TEXT)
    vadd(x, y, out, BLOCK=1024)                   # const parameters as keywords
    vadd[grid](x, y, out, BLOCK=1024)             # Triton's spelling: the grid is checked

The grid of an Argus kernel is part of its declaration (@kernel(grid=...)), so
`[grid]` is optional; when given (a tuple, or a function of the constants and
sizes as in Triton) it must equal the declared one."""

import os

from . import compiler, source_scan
from .errors import ArgumentError, ArgusError


def _device_arch(args):
    """The architecture argusc targets for the GPU of the call's first CUDA tensor
    (else torch's current device)."""
    import torch
    device = next((a.device for a in args if hasattr(a, "device") and getattr(a.device, "type", "") == "cuda"), None)
    index = device.index if device is not None and device.index is not None else torch.cuda.current_device()
    major, minor = torch.cuda.get_device_capability(index)
    arch = source_scan.arch_for_capability(major, minor)
    if arch is None:
        raise ArgusError(f"cuda:{index} has compute capability {major}.{minor}; Argus targets 8.0 (sm_80) and newer")
    return arch


class JITKernel:
    """One kernel of a source, compiled per set of constants on first use."""

    def __init__(self, source, origin, name=None, arch=None, cache_dir=None, argusc=None):
        self.source = source
        self.origin = origin
        self.arch = arch
        self.cache_dir = cache_dir
        self._argusc = argusc
        found = source_scan.kernels(source)
        if not found:
            raise ArgusError(f"{origin} defines no @kernel")
        if name is None:
            name = next(iter(found))
        if name not in found:
            raise ArgusError(f"{origin} has no kernel '{name}' (kernels: {', '.join(found)})")
        self.name = name
        self.params = found[name]
        self.constants = [p for p in self.params if p.kind == "const"]
        self._modules = {}  # (constants, arch) -> argus Module
        self.compilations = 0  # how many times this object ran argusc (the rest came from a cache)

    def split_arguments(self, kwargs):
        """(constants, runtime keyword arguments) of a call; checks that every
        const parameter without a default is given."""
        names = {p.name for p in self.constants}
        consts = {k: v for k, v in kwargs.items() if k in names}
        runtime = {k: v for k, v in kwargs.items() if k not in names}
        missing = [p.name for p in self.constants if not p.has_default and p.name not in consts]
        if missing:
            raise ArgumentError(f"{self.name}() needs the constant{'s' if len(missing) > 1 else ''} "
                                f"{', '.join(missing)} as keyword{'s' if len(missing) > 1 else ''} "
                                f"(e.g. {missing[0]}=1024): {'they have' if len(missing) > 1 else 'it has'} no default")
        return consts, runtime

    def ptx_path(self, arch, **constants):
        """Compiles (or finds in the disk cache) the source with these constants
        for `arch`; returns the PTX path, its .meta.json beside it. Needs no GPU."""
        source_arch = source_scan.declared_arch(self.source)
        if source_arch and not source_scan.arch_runs(arch, source_arch):
            raise ArgusError(f"{self.origin} says '# arch: {source_arch}', which {arch} does not have; "
                             f"run it on a GPU with {source_arch}")
        path, compiled = compiler.compile_cached(self.source, self.origin, constants, arch,
                                                 argusc=self._argusc or compiler.find_argusc(),
                                                 root=self.cache_dir)
        self.compilations += compiled
        return path

    def specialize(self, arch=None, **constants):
        """The loaded argus Kernel for these constants (compiled on first use)."""
        from .module import load
        arch = arch or self.arch
        key = (tuple(sorted((k, compiler.define_text(k, v)) for k, v in constants.items())), arch)
        module = self._modules.get(key)
        if module is None:
            module = load(self.ptx_path(arch, **constants))
            self._modules[key] = module
        return module[self.name]

    def __call__(self, *args, **kwargs):
        return self._launch(None, args, kwargs)

    def __getitem__(self, grid):
        return lambda *args, **kwargs: self._launch(grid, args, kwargs)

    def _launch(self, grid, args, kwargs):
        consts, runtime = self.split_arguments(kwargs)
        kernel = self.specialize(self.arch or _device_arch(args), **consts)
        if grid is not None:
            self._check_grid(kernel, grid, consts, args, runtime)
        return kernel(*args, **runtime)

    def _check_grid(self, kernel, grid, consts, args, runtime):
        plan_kwargs = {k: v for k, v in runtime.items() if k != "stream"}
        plan = kernel.plan(*args, **plan_kwargs)
        if callable(grid):
            meta = dict(kernel.spec.constants)
            meta.update(consts)
            meta.update(plan.sizes)
            grid = grid(meta)
        given = tuple(int(g) for g in (grid if isinstance(grid, (tuple, list)) else (grid,)))
        given = given + (1,) * (3 - len(given))
        if given != tuple(plan.grid):
            sizes = ", ".join(f"{k}={v}" for k, v in plan.sizes.items())
            raise ArgumentError(f"{self.name}[{given}]: the kernel declares grid=({', '.join(kernel.spec.grid_text)}), "
                                f"which is {tuple(plan.grid)} with {sizes}; an Argus kernel's grid comes from its "
                                f"@kernel(grid=...) declaration, so call it without [grid]")

    def __repr__(self):
        consts = ", ".join(p.name for p in self.constants)
        return f"<argus.jit kernel {self.name} from {self.origin}{'; constants: ' + consts if consts else ''}>"


def jit(path=None, *, source=None, kernel=None, arch=None, cache_dir=None, argusc=None):
    """A kernel compiled on first call: from the `.ag` file `path`, or from the
    text `source`. `kernel`: which kernel (default: the first); `arch`: sm_80,
    sm_90 or sm_90a (default: the GPU's); `cache_dir`, `argusc`: override
    $ARGUS_CACHE_DIR and the search for argusc."""
    if (path is None) == (source is None):
        raise ArgusError("argus.jit takes a .ag file path or source=TEXT (one of them)")
    if path is not None:
        path = os.fspath(path)
        try:
            with open(path, encoding="utf-8") as f:
                source = f.read()
        except OSError as e:
            raise ArgusError(f"cannot read '{path}' ({e.strerror})") from None
        origin = path
    else:
        origin = "<source>"
    return JITKernel(source, origin, kernel, arch, cache_dir, argusc)

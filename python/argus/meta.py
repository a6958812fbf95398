"""Kernel metadata (the `.meta.json` argusc writes beside its PTX/cubin) and the
evaluation of its launch expressions (grid sizes, requirements)."""

import json
import os

from .errors import MetadataError

SUPPORTED_VERSION = 1
_INT64_MASK = (1 << 64) - 1


def _wrap64(v):
    v &= _INT64_MASK
    return v - (1 << 64) if v >> 63 else v


def _trunc_div(a, b):
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _trunc_mod(a, b):
    return a - _trunc_div(a, b) * b


def _binary(op, a, b):
    # Same semantics as ir::LaunchExpr::evaluate: 64-bit wrapping arithmetic,
    # division and modulo truncating toward zero (C), cdiv(a, b) = (a + b - 1) / b.
    if op == "add":
        return _wrap64(a + b)
    if op == "sub":
        return _wrap64(a - b)
    if op == "mul":
        return _wrap64(a * b)
    if op in ("floordiv", "cdiv", "mod"):
        if b == 0:
            raise ZeroDivisionError("division by zero")
        n = _wrap64(a + b - 1) if op == "cdiv" else a
        return _wrap64(_trunc_mod(n, b) if op == "mod" else _trunc_div(n, b))
    if op == "min":
        return min(a, b)
    if op == "max":
        return max(a, b)
    if op == "lt":
        return int(a < b)
    if op == "le":
        return int(a <= b)
    if op == "gt":
        return int(a > b)
    if op == "ge":
        return int(a >= b)
    if op == "eq":
        return int(a == b)
    if op == "ne":
        return int(a != b)
    if op == "and":
        return int(a != 0 and b != 0)
    if op == "or":
        return int(a != 0 or b != 0)
    raise MetadataError(f"unknown launch-expression operator '{op}'")


def evaluate(expr, sizes):
    """Evaluates a launch-expression tree ({"const": 4}, {"size": "N"},
    {"op": "cdiv", "args": [...]}) with the runtime sizes given by name."""
    if not isinstance(expr, dict):
        raise MetadataError(f"malformed launch expression {expr!r}")
    if "const" in expr:
        return int(expr["const"])
    if "size" in expr:
        name = expr["size"]
        if name not in sizes:
            raise MetadataError(f"launch expression uses unknown size '{name}'")
        return int(sizes[name])
    op, args = expr.get("op"), expr.get("args")
    if not isinstance(args, list):
        raise MetadataError(f"malformed launch expression {expr!r}")
    if op == "not":
        if len(args) != 1:
            raise MetadataError(f"'not' takes one operand in {expr!r}")
        return int(evaluate(args[0], sizes) == 0)
    if len(args) != 2:
        raise MetadataError(f"'{op}' takes two operands in {expr!r}")
    return _binary(op, evaluate(args[0], sizes), evaluate(args[1], sizes))


class Param:
    __slots__ = ("name", "kind", "dtype", "dims", "default")

    def __init__(self, raw, kernel):
        try:
            self.name = str(raw["name"])
            self.kind = str(raw["kind"])
            self.dtype = str(raw["dtype"])
            self.dims = [dict(d) for d in raw.get("dims", [])]
            self.default = raw.get("default")  # a scalar's declared default ('eps: f32 = 1e-5'), else None
        except (KeyError, TypeError, ValueError) as e:
            raise MetadataError(f"kernel '{kernel}': malformed parameter {raw!r} ({e})") from None
        if self.kind not in ("tensor", "scalar", "size"):
            raise MetadataError(f"kernel '{kernel}': parameter '{self.name}' has unknown kind '{self.kind}'")

    def shape_text(self):
        return "(" + ", ".join(str(d.get("const", d.get("size"))) for d in self.dims) + \
            ("," if len(self.dims) == 1 else "") + ")"


class TensorMapSpec:
    """A TMA descriptor the kernel takes after its sizes ("tensor_maps" entry).
    `store`: the map serves the epilogue's TMA stores; the kernel checks the
    tensor's alignment itself and stores without the map when TMA cannot
    describe it, so such a map is passed as zeros instead of failing the launch."""
    __slots__ = ("param", "param_index", "box", "swizzle_bytes", "store")

    def __init__(self, raw, kernel, params):
        try:
            self.param = str(raw["param"])
            self.box = [int(b) for b in raw["box"]]
            self.swizzle_bytes = int(raw["swizzle_bytes"])
            self.store = raw.get("store", False)  # absent for load maps and in older metadata
        except (KeyError, TypeError, ValueError) as e:
            raise MetadataError(f"kernel '{kernel}': malformed tensor map {raw!r} ({type(e).__name__}: {e})") from None
        if not isinstance(self.store, bool):  # bool(x) would take "yes" or 1 silently
            raise MetadataError(f"kernel '{kernel}': malformed tensor map {raw!r} ('store' is "
                                f"{self.store!r}, not true or false)")
        index = next((i for i, p in enumerate(params) if p.name == self.param and p.kind == "tensor"), None)
        if index is None:
            raise MetadataError(f"kernel '{kernel}': tensor map of '{self.param}', which is not a tensor parameter")
        self.param_index = index
        if len(self.box) != len(params[index].dims):
            raise MetadataError(f"kernel '{kernel}': the tensor map of '{self.param}' has a box of "
                                f"{len(self.box)} extents for {len(params[index].dims)} dimensions")
        if self.swizzle_bytes not in (0, 32, 64, 128):
            raise MetadataError(f"kernel '{kernel}': tensor map of '{self.param}' has swizzle_bytes "
                                f"{self.swizzle_bytes}, not 0, 32, 64 or 128")


class KernelSpec:
    """One kernel's entry of the metadata document."""

    def __init__(self, raw):
        try:
            self.name = str(raw["name"])
            self.warps = int(raw["warps"])
            self.threads = int(raw["threads"])
            self.params = [Param(p, raw["name"]) for p in raw["params"]]
            self.sizes = [str(s) for s in raw["sizes"]]
            self.grid = list(raw["grid"])
            self.grid_text = [str(t) for t in raw.get("grid_text", ["?"] * 3)]
            self.requirements = list(raw.get("requirements", []))
            self.static_shared_bytes = int(raw.get("static_shared_bytes", 0))
            self.dynamic_shared_bytes = int(raw.get("dynamic_shared_bytes", 0))
            self.constants = dict(raw.get("constants", {}))
            maps = raw.get("tensor_maps", [])  # older metadata: no maps
            self.producer_warps = int(raw.get("producer_warps", 0))
            self.cluster = int(raw.get("cluster", 1))  # blocks per cluster along grid axis 0
        except (KeyError, TypeError, ValueError) as e:
            raise MetadataError(f"malformed kernel entry ({type(e).__name__}: {e})") from None
        if not isinstance(maps, list):
            raise MetadataError(f"kernel '{self.name}': 'tensor_maps' is not a list")
        self.tensor_maps = [TensorMapSpec(m, self.name, self.params) for m in maps]
        if not 1 <= self.cluster <= 8:
            raise MetadataError(f"kernel '{self.name}': a cluster of {self.cluster} blocks")
        if len(self.grid) != 3:
            raise MetadataError(f"kernel '{self.name}': grid has {len(self.grid)} axes, expected 3")
        # A warp-specialized kernel launches producer warps besides the block's own.
        producers = self.producer_warps
        if self.threads != (self.warps + producers) * 32 or not 1 <= self.threads <= 1024:
            raise MetadataError(f"kernel '{self.name}': {self.threads} threads for {self.warps} warps"
                                + (f" and {producers} producer warps" if producers else ""))

    @property
    def user_params(self):
        """Parameters the caller passes (tensors and scalars, in ABI order)."""
        return [p for p in self.params if p.kind != "size"]

    def signature(self):
        parts = []
        for p in self.user_params:
            parts.append(f"{p.name}: Tensor[{p.dtype}, {p.shape_text()}]" if p.kind == "tensor"
                         else f"{p.name}: {p.dtype}" + (f" = {p.default}" if p.default is not None else ""))
        return f"{self.name}({', '.join(parts)})"


def metadata_path(binary_path):
    """x.ptx -> x.meta.json (as argusc names it)."""
    base, ext = os.path.splitext(binary_path)
    if ext not in (".ptx", ".cubin"):
        base = binary_path
    return base + ".meta.json"


def parse_metadata(text, origin="<metadata>"):
    try:
        doc = json.loads(text)
    except ValueError as e:
        raise MetadataError(f"{origin}: not valid JSON ({e})") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("kernels"), list):
        raise MetadataError(f"{origin}: expected an object with a 'kernels' list")
    if doc.get("version") != SUPPORTED_VERSION:
        raise MetadataError(f"{origin}: metadata version {doc.get('version')!r}, this launcher reads "
                            f"version {SUPPORTED_VERSION}; recompile with a matching argusc")
    try:
        return [KernelSpec(k) for k in doc["kernels"]]
    except MetadataError as e:
        raise MetadataError(f"{origin}: {e}") from None


def read_metadata(binary_path):
    path = metadata_path(binary_path)
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise MetadataError(f"cannot read the kernel metadata '{path}' ({e.strerror}); argusc writes it "
                            f"beside the .ptx/.cubin it compiles") from None
    return parse_metadata(text, path)

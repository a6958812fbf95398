"""Checks a kernel call's arguments against the kernel's metadata and computes
what to launch: packed parameter values in ABI order, grid and block. Works on
anything tensor-like (dtype, shape, device, is_contiguous(), data_ptr()), so it
can be tested without a GPU."""

import ctypes
import math
import numbers
import operator
import struct

from .errors import ArgumentError, MetadataError
from .meta import evaluate
from .tensor_map import TensorMapArg, plan_tensor_map

# torch dtype (as str(tensor.dtype)) -> Argus dtype name.
TORCH_DTYPES = {
    "torch.bool": "bool", "torch.int8": "i8", "torch.int16": "i16", "torch.int32": "i32",
    "torch.int64": "i64", "torch.uint8": "u8", "torch.uint16": "u16", "torch.uint32": "u32",
    "torch.uint64": "u64", "torch.float16": "f16", "torch.bfloat16": "bf16",
    "torch.float32": "f32", "torch.float64": "f64", "torch.float8_e4m3fn": "f8e4m3",
    "torch.float8_e5m2": "f8e5m2",
}
ARGUS_TO_TORCH = {v: k for k, v in TORCH_DTYPES.items()}

INT32_MAX = 2**31 - 1
GRID_LIMITS = (2**31 - 1, 65535, 65535)

_INT_TYPES = {
    "i8": (ctypes.c_int8, -2**7, 2**7 - 1), "i16": (ctypes.c_int16, -2**15, 2**15 - 1),
    "i32": (ctypes.c_int32, -2**31, 2**31 - 1), "i64": (ctypes.c_int64, -2**63, 2**63 - 1),
    "u8": (ctypes.c_uint8, 0, 2**8 - 1), "u16": (ctypes.c_uint16, 0, 2**16 - 1),
    "u32": (ctypes.c_uint32, 0, 2**32 - 1), "u64": (ctypes.c_uint64, 0, 2**64 - 1),
}
_FLOAT_MAX = {"f16": 65504.0, "bf16": 3.3895313892515355e38, "f32": 3.4028234663852886e38}


def _f32_bits(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


def _bf16_bits(x):
    """Round-to-nearest-even f32 -> bf16, as the kernel's own conversions do."""
    if math.isnan(x):
        return 0x7FC0
    bits = _f32_bits(x)
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) & 0xFFFF


def pack_scalar(kernel, param, value):
    """The ctypes value of a scalar argument, range-checked for its dtype."""
    where = f"scalar '{param.name}' of {kernel} ({param.dtype})"
    dt = param.dtype
    if dt == "bool":
        if not isinstance(value, (bool, numbers.Integral)) or value not in (0, 1):
            raise ArgumentError(f"{where} expects True or False, got {value!r}")
        return ctypes.c_uint8(1 if value else 0)
    if dt in _INT_TYPES:
        ctype, lo, hi = _INT_TYPES[dt]
        if isinstance(value, bool) or isinstance(value, float):
            raise ArgumentError(f"{where} expects an integer, got {value!r}")
        try:
            v = operator.index(value)
        except TypeError:
            raise ArgumentError(f"{where} expects an integer, got {type(value).__name__}") from None
        if not lo <= v <= hi:
            raise ArgumentError(f"{where}: {v} is outside the range [{lo}, {hi}] of {dt}")
        return ctype(v)
    if dt in ("f16", "bf16", "f32", "f64"):
        if isinstance(value, bool) or isinstance(value, (str, bytes)):
            raise ArgumentError(f"{where} expects a number, got {value!r}")
        try:
            v = float(value)
        except (TypeError, ValueError):
            raise ArgumentError(f"{where} expects a number, got {type(value).__name__}") from None
        if dt != "f64" and math.isfinite(v) and abs(v) > _FLOAT_MAX[dt]:
            raise ArgumentError(f"{where}: {v} overflows {dt} (largest finite value {_FLOAT_MAX[dt]:g})")
        if dt == "f64":
            return ctypes.c_double(v)
        if dt == "f32":
            return ctypes.c_float(v)
        if dt == "f16":
            return ctypes.c_uint16(struct.unpack("<H", struct.pack("<e", v))[0])
        return ctypes.c_uint16(_bf16_bits(v))
    raise ArgumentError(f"{where}: scalars of type {dt} cannot be passed from Python")


def _is_tensor_like(x):
    return all(hasattr(x, a) for a in ("dtype", "shape", "device", "data_ptr", "is_contiguous"))


class LaunchPlan:
    """Everything cuLaunchKernel needs, after every check passed."""

    def __init__(self, values, grid, block, sizes, tensor_maps=()):
        self.values = values  # ctypes objects (and TensorMapArgs, last) in ABI order
        self.grid = grid      # (gx, gy, gz)
        self.block = block    # (threads, 1, 1)
        self.sizes = sizes    # {name: extent}
        self.tensor_maps = list(tensor_maps)  # the TensorMapArgs to encode before launching
        self.params = None  # cuLaunchKernel's pointer array, built once the maps are encoded

    @property
    def empty(self):
        """A grid with a zero axis: nothing to run (an empty tensor)."""
        return 0 in self.grid


def bind_arguments(spec, args, kwargs):
    """Matches positional and keyword arguments to the kernel's parameters."""
    params = spec.user_params
    names = [p.name for p in params]
    if len(args) > len(params):
        raise ArgumentError(f"{spec.name}() takes {len(params)} arguments ({', '.join(names)}) but "
                            f"{len(args)} were given; signature: {spec.signature()}")
    bound = dict(zip(names, args))
    for key, value in kwargs.items():
        if key not in names:
            hint = (f"; '{key}' is a runtime size, derived from the tensors' shapes" if key in spec.sizes
                    else f"; '{key}' is a compile-time constant (recompile with -D {key}=...)"
                    if key in spec.constants else "")
            raise ArgumentError(f"{spec.name}() got an unexpected argument '{key}'{hint}; "
                                f"signature: {spec.signature()}")
        if key in bound:
            raise ArgumentError(f"{spec.name}() got argument '{key}' twice (by position and by name)")
        bound[key] = value
    for p in params:  # scalars with a declared default ('eps: f32 = 1e-5') may be left out
        if p.name not in bound and p.kind == "scalar" and p.default is not None:
            bound[p.name] = p.default
    missing = [n for n in names if n not in bound]
    if missing:
        raise ArgumentError(f"{spec.name}() is missing argument{'s' if len(missing) > 1 else ''} "
                            f"{', '.join(repr(m) for m in missing)}; signature: {spec.signature()}")
    return bound


def check_tensor(spec, param, t, device_index, sizes, size_origin):
    where = f"tensor '{param.name}' of {spec.name}"
    expected = f"Tensor[{param.dtype}, {param.shape_text()}]"
    if not _is_tensor_like(t):
        raise ArgumentError(f"{where} expects a torch tensor ({expected}) on the GPU, got {type(t).__name__}")
    dtype = TORCH_DTYPES.get(str(t.dtype))
    if dtype != param.dtype:
        want = ARGUS_TO_TORCH.get(param.dtype, param.dtype)
        raise ArgumentError(f"{where} expects dtype {param.dtype} ({want}), got {t.dtype}; "
                            f"convert with .to({want})")
    dev = t.device
    if getattr(dev, "type", None) != "cuda":
        raise ArgumentError(f"{where} is on {dev}, expected the GPU (cuda:{device_index}); move it with .cuda()")
    if dev.index is not None and dev.index != device_index:
        raise ArgumentError(f"{where} is on {dev} but the module was loaded on cuda:{device_index}")
    shape = tuple(int(s) for s in t.shape)
    if len(shape) != len(param.dims):
        raise ArgumentError(f"{where} expects {len(param.dims)} dimension{'s' if len(param.dims) != 1 else ''} "
                            f"{param.shape_text()}, got shape {shape}")
    if not t.is_contiguous():
        raise ArgumentError(f"{where} must be contiguous (row-major); got strides "
                            f"{tuple(t.stride()) if hasattr(t, 'stride') else '?'}; pass .contiguous()")
    for axis, (extent, dim) in enumerate(zip(shape, param.dims)):
        if "const" in dim:
            if extent != int(dim["const"]):
                raise ArgumentError(f"{where}: dimension {axis} must be {dim['const']} (a constant of the "
                                    f"kernel), got {extent} in shape {shape}")
            continue
        name = dim.get("size")
        if name is None:
            raise MetadataError(f"{spec.name}: dimension {axis} of '{param.name}' has neither a size nor a constant")
        if name in sizes:
            if sizes[name] != extent:
                first = size_origin[name]
                raise ArgumentError(f"{spec.name}: size {name} is {sizes[name]} from {first} but {extent} "
                                    f"from {param.name}.shape[{axis}]; tensors that share a size name "
                                    f"must agree")
            continue
        if extent > INT32_MAX:
            raise ArgumentError(f"{where}: size {name} = {extent} (from shape[{axis}]) does not fit the "
                                f"kernel's i32 sizes (at most {INT32_MAX})")
        sizes[name] = extent
        size_origin[name] = f"{param.name}.shape[{axis}]"


def plan_launch(spec, args, kwargs, device_index):
    """Checks the call and returns a LaunchPlan; raises ArgumentError."""
    bound = bind_arguments(spec, args, kwargs)
    sizes, size_origin = {}, {}
    for p in spec.user_params:
        if p.kind == "tensor":
            check_tensor(spec, p, bound[p.name], device_index, sizes, size_origin)
    missing = [s for s in spec.sizes if s not in sizes]
    if missing:
        raise MetadataError(f"{spec.name}: sizes {missing} appear in no tensor parameter")
    values = []
    for p in spec.params:
        if p.kind == "tensor":
            values.append(ctypes.c_void_p(int(bound[p.name].data_ptr())))
        elif p.kind == "scalar":
            values.append(pack_scalar(spec.name, p, bound[p.name]))
        else:
            values.append(ctypes.c_int32(sizes[p.name]))
    size_text = ", ".join(f"{k}={v}" for k, v in sizes.items())
    for req in spec.requirements:
        try:
            ok = evaluate(req["condition"], sizes)
        except ZeroDivisionError:
            ok = 0
        if not ok:
            cond = req.get("condition_text", "?")
            text = req.get("text", cond)
            detail = text if text == cond else f"{text} ({cond})"
            raise ArgumentError(f"{spec.name}: requirement failed: {detail}, with {size_text}")
    grid = []
    for axis, expr in enumerate(spec.grid):
        try:
            g = evaluate(expr, sizes)
        except ZeroDivisionError:
            raise ArgumentError(f"{spec.name}: grid axis {axis} ({spec.grid_text[axis]}) divides by zero "
                                f"with {size_text}") from None
        if g < 0 or g > GRID_LIMITS[axis]:
            raise ArgumentError(f"{spec.name}: grid axis {axis} = {spec.grid_text[axis]} = {g} with "
                                f"{size_text}; it must lie in [0, {GRID_LIMITS[axis]}]")
        if axis == 0 and g % spec.cluster:
            raise ArgumentError(f"{spec.name}: grid axis 0 = {spec.grid_text[0]} = {g} with {size_text}, but the "
                                f"kernel runs in clusters of {spec.cluster} blocks along it; it must be a multiple of "
                                f"{spec.cluster}")
        grid.append(g)
    # TMA descriptors after the sizes (ir/bulk.h); an empty launch has none to build.
    maps = [] if 0 in grid else [tensor_map_arg(spec, m, bound[m.param]) for m in spec.tensor_maps]
    return LaunchPlan(values + maps, tuple(grid), (spec.threads, 1, 1), sizes, maps)


def tensor_map_arg(spec, tensor_map, tensor):
    """The (not yet encoded) map of `tensor_map` for the call's tensor."""
    param = spec.params[tensor_map.param_index]
    names = ["" if "const" in d else str(d.get("size", "")) for d in param.dims]
    try:
        encoding = plan_tensor_map(param.name, param.dtype, tuple(int(s) for s in tensor.shape), names,
                                   int(tensor.data_ptr()), tensor_map.box, tensor_map.swizzle_bytes)
    except ArgumentError as e:
        if tensor_map.store:  # the kernel stores without the map: pass zeros (TensorMapArg)
            return TensorMapArg(param.name, None, store=True, zero_reason=f"{spec.name}: {e}")
        raise ArgumentError(f"{spec.name}: {e}") from None
    return TensorMapArg(param.name, encoding, store=tensor_map.store)

"""TMA tensor maps (CUtensorMap) of kernels that copy tiles with
cp.async.bulk.tensor: the metadata's "tensor_maps" list, per map, a tensor
parameter, the box (the tile one copy moves, outermost first) and the swizzle;
at launch each map is encoded with cuTensorMapEncodeTiled for the actual tensor
and passed as a 128-byte, 64-byte aligned argument after the size parameters.
The same contract and messages as runtime/gpu/tensor_map.cpp; pure Python, so
the planning and packing can be tested without a GPU."""

import ctypes

from .errors import ArgumentError

# CUtensorMapDataType (cuda.h). TMA moves bytes and fills with zero bits, so the
# 8-bit floats travel as u8 and signed 8/16-bit integers as unsigned ones.
DATA_TYPES = {
    "bool": 0, "i8": 0, "u8": 0, "f8e4m3": 0, "f8e5m2": 0, "i16": 1, "u16": 1, "u32": 2, "i32": 3,
    "u64": 4, "i64": 5, "f16": 6, "f32": 7, "f64": 8, "bf16": 9,
}
ELEMENT_BYTES = {
    "bool": 1, "i8": 1, "u8": 1, "f8e4m3": 1, "f8e5m2": 1, "i16": 2, "u16": 2, "f16": 2, "bf16": 2,
    "i32": 4, "u32": 4, "f32": 4, "i64": 8, "u64": 8, "f64": 8,
}
SWIZZLES = {0: 0, 32: 1, 64: 2, 128: 3}  # bytes -> CUtensorMapSwizzle
INTERLEAVE_NONE = 0
L2_PROMOTION_128B = 2
FLOAT_OOB_FILL_NONE = 0  # out-of-bounds elements read as zero

MAP_BYTES = 128
MAP_ALIGNMENT = 64
MAX_RANK = 5
MAX_BOX = 256


class TensorMapEncoding:
    """The arguments of one cuTensorMapEncodeTiled call, innermost dimension first."""

    __slots__ = ("data_type", "global_address", "global_dims", "global_strides", "box_dims",
                 "element_strides", "interleave", "swizzle", "l2_promotion", "oob_fill")

    def __init__(self, data_type, global_address, global_dims, global_strides, box_dims, swizzle):
        self.data_type = data_type
        self.global_address = global_address
        self.global_dims = global_dims        # the tensor's extents reversed
        self.global_strides = global_strides  # bytes, of dimensions 1..rank-1
        self.box_dims = box_dims
        self.element_strides = [1] * len(global_dims)
        self.interleave = INTERLEAVE_NONE
        self.swizzle = swizzle
        self.l2_promotion = L2_PROMOTION_128B
        self.oob_fill = FLOAT_OOB_FILL_NONE


def _dim_text(shape, names, d):
    name = names[d] if d < len(names) else ""
    return f"{name}={shape[d]}" if name else str(shape[d])


def plan_tensor_map(tensor, dtype, shape, dim_names, address, box, swizzle_bytes):
    """The encode call for a row-major contiguous tensor; raises ArgumentError
    when TMA cannot describe it ("tensor 'A': its row of K=100 bf16 elements is
    200 bytes; TMA needs rows that are a multiple of 16 bytes (K a multiple of 8)")."""
    where = f"tensor '{tensor}'"
    rank = len(shape)
    if not 1 <= rank <= MAX_RANK:
        raise ArgumentError(f"{where} has {rank} dimensions; TMA copies tensors of 1 to 5 dimensions")
    if len(box) != rank:
        raise ArgumentError(f"{where}: the kernel's tensor map has a box of {len(box)} dimensions for a tensor "
                            f"of {rank} (the metadata does not match the tensor)")
    if dtype not in DATA_TYPES:
        raise ArgumentError(f"{where} has element type {dtype}, which TMA cannot copy")
    if swizzle_bytes not in SWIZZLES:
        raise ArgumentError(f"{where}: the kernel's tensor map asks for a {swizzle_bytes}-byte swizzle; TMA "
                            f"swizzles 32, 64 or 128 bytes")
    element = ELEMENT_BYTES[dtype]
    for d, extent in enumerate(shape):
        if extent < 1:
            raise ArgumentError(f"{where} has an empty dimension ({_dim_text(shape, dim_names, d)}); a kernel "
                                f"that copies it with TMA needs every extent to be at least 1")
        if extent > 2**32:
            raise ArgumentError(f"{where}: dimension {d} ({_dim_text(shape, dim_names, d)}) is larger than "
                                f"TMA's limit of 2^32 elements")
    if address % 16:
        raise ArgumentError(f"{where} starts at address {address:#x}, which is not 16-byte aligned; TMA needs "
                            f"16-byte aligned tensors (pass a tensor that starts at an aligned address, e.g. a "
                            f"fresh .contiguous() copy instead of a slice)")
    dims = list(reversed(shape))
    strides = []
    stride = element
    for i in range(1, rank):
        inner = rank - i  # the dimension (outermost first) whose extent the stride spans
        stride *= dims[i - 1]
        if stride % 16:
            name = dim_names[inner] if inner < len(dim_names) else ""
            multiple = 16 // element
            if i == 1:
                hint = f"{name} a multiple of {multiple}" if name else f"a multiple of {multiple} elements"
                raise ArgumentError(f"{where}: its row of {_dim_text(shape, dim_names, inner)} {dtype} elements "
                                    f"is {stride} bytes; TMA needs rows that are a multiple of 16 bytes ({hint})")
            raise ArgumentError(f"{where}: the stride of its dimension {inner - 1} is {stride} bytes; TMA needs "
                                f"strides that are a multiple of 16 bytes")
        if stride >= 2**40:
            raise ArgumentError(f"{where} is too large for TMA: the stride of its dimension {inner - 1} is "
                                f"{stride} bytes (TMA's limit is 2^40)")
        strides.append(stride)
    for d, extent in enumerate(box):
        if not 1 <= extent <= MAX_BOX:
            raise ArgumentError(f"{where}: the kernel copies tiles of {extent} elements along dimension {d}; TMA "
                                f"copies 1 to 256 elements per dimension")
    box_dims = list(reversed(box))
    inner_bytes = box_dims[0] * element
    if inner_bytes % 16:
        raise ArgumentError(f"{where}: the kernel copies tiles whose rows are {box_dims[0]} {dtype} elements "
                            f"({inner_bytes} bytes); TMA needs tile rows that are a multiple of 16 bytes")
    if swizzle_bytes and inner_bytes > swizzle_bytes:
        raise ArgumentError(f"{where}: the kernel copies tiles whose rows are {inner_bytes} bytes into a "
                            f"{swizzle_bytes}-byte swizzled buffer; TMA needs tile rows of at most "
                            f"{swizzle_bytes} bytes there")
    return TensorMapEncoding(DATA_TYPES[dtype], address, dims, strides, box_dims, SWIZZLES[swizzle_bytes])


class TensorMapArg:
    """One tensor-map kernel argument: 128 bytes at a 64-byte aligned address
    inside a buffer it owns (ctypes cannot align an object itself), filled by
    the encoder at launch.

    A store map (`store`, the epilogue's TMA stores) whose tensor TMA cannot
    describe has no `encoding` and stays 128 zero bytes: the kernel checks the
    tensor's alignment itself and then stores without reading the map.
    `zero_reason` says why a store map is zeros (None while it is not)."""

    def __init__(self, tensor, encoding, store=False, zero_reason=None):
        self.tensor = tensor
        self.encoding = encoding
        self.store = store
        self.zero_reason = zero_reason
        self._buffer = (ctypes.c_uint8 * (MAP_BYTES + MAP_ALIGNMENT))()  # ctypes zero-fills it
        base = ctypes.addressof(self._buffer)
        self.address = (base + MAP_ALIGNMENT - 1) // MAP_ALIGNMENT * MAP_ALIGNMENT

    def raw(self):
        """The map's 128 bytes."""
        return ctypes.string_at(self.address, MAP_BYTES)


def param_addresses(values):
    """The kernelParams entries: where each argument's bytes lie."""
    return [v.address if isinstance(v, TensorMapArg) else ctypes.addressof(v) for v in values]


def encode_tensor_maps(plan, encode):
    """Fills every tensor map of `plan` with `encode(arg)` (cuda.encode_tensor_map
    on a GPU; a stand-in in tests). A store map TMA cannot describe has no
    encoding and stays zero; any other map that fails to encode fails the launch
    (a kernel that passes its own alignment test would read the map)."""
    for arg in plan.tensor_maps:
        if arg.encoding is None:
            continue
        encode(arg)

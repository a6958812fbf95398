"""A thin ctypes layer over the CUDA driver API (libcuda.so.1): only the calls
the launcher needs, each checked; a failure raises CudaError with the driver's
name for the code (cuGetErrorName)."""

import ctypes

from .errors import ArgusError, CudaError
from .tensor_map import param_addresses

CU_JIT_INFO_LOG_BUFFER = 3
CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4
CU_JIT_ERROR_LOG_BUFFER = 5
CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6

FUNC_ATTRIBUTES = {  # CUfunction_attribute
    "max_threads_per_block": 0, "shared_size_bytes": 1, "const_size_bytes": 2,
    "local_size_bytes": 3, "num_regs": 4, "ptx_version": 5, "binary_version": 6,
}

_lib = None


def lib():
    global _lib
    if _lib is None:
        try:
            _lib = ctypes.CDLL("libcuda.so.1")
        except OSError as e:
            raise ArgusError(f"cannot load the CUDA driver library libcuda.so.1 ({e}); is an NVIDIA "
                             f"driver installed?") from None
        vp, u, i = ctypes.c_void_p, ctypes.c_uint, ctypes.c_int
        signatures = {
            "cuInit": [u],
            "cuGetErrorName": [i, ctypes.POINTER(ctypes.c_char_p)],
            "cuGetErrorString": [i, ctypes.POINTER(ctypes.c_char_p)],
            "cuCtxGetCurrent": [ctypes.POINTER(vp)],
            "cuCtxSetCurrent": [vp],
            "cuCtxGetDevice": [ctypes.POINTER(i)],
            "cuDeviceGet": [ctypes.POINTER(i), i],
            "cuDevicePrimaryCtxRetain": [ctypes.POINTER(vp), i],
            "cuModuleLoadDataEx": [ctypes.POINTER(vp), ctypes.c_char_p, u, ctypes.POINTER(i),
                                   ctypes.POINTER(vp)],
            "cuModuleGetFunction": [ctypes.POINTER(vp), vp, ctypes.c_char_p],
            "cuModuleUnload": [vp],
            "cuFuncGetAttribute": [ctypes.POINTER(i), i, vp],
            "cuFuncSetAttribute": [vp, i, i],
            "cuLaunchKernel": [vp, u, u, u, u, u, u, u, vp, ctypes.POINTER(vp), ctypes.POINTER(vp)],
        }
        for name, argtypes in signatures.items():
            fn = getattr(_lib, name)
            fn.argtypes = argtypes
            fn.restype = ctypes.c_int
    return _lib


def error_name(code):
    name, text = ctypes.c_char_p(), ctypes.c_char_p()
    if lib().cuGetErrorName(code, ctypes.byref(name)) != 0 or not name.value:
        return f"CUresult {code}", "unknown error code"
    lib().cuGetErrorString(code, ctypes.byref(text))
    return name.value.decode(), (text.value or b"").decode()


def check(call, code, detail=""):
    if code != 0:
        name, description = error_name(code)
        raise CudaError(call, code, name, description, detail)


def current_context():
    ctx = ctypes.c_void_p()
    check("cuCtxGetCurrent", lib().cuCtxGetCurrent(ctypes.byref(ctx)))
    return ctx.value


def context_for_device(device_index):
    """The context to load modules into: the current one (torch's, once torch has
    initialised the device), else the device's primary context made current."""
    check("cuInit", lib().cuInit(0))
    ctx = current_context()
    if ctx:
        return ctx
    dev, primary = ctypes.c_int(), ctypes.c_void_p()
    check("cuDeviceGet", lib().cuDeviceGet(ctypes.byref(dev), device_index))
    check("cuDevicePrimaryCtxRetain", lib().cuDevicePrimaryCtxRetain(ctypes.byref(primary), dev))
    check("cuCtxSetCurrent", lib().cuCtxSetCurrent(primary))
    return primary.value


def ensure_current(ctx):
    """Makes `ctx` current on this thread if no context is; refuses another one."""
    current = current_context()
    if current == ctx:
        return
    if current:
        raise ArgusError("another CUDA context is current on this thread than the one the module was "
                         "loaded in; launch from the device (and context) that called argus.load")
    check("cuCtxSetCurrent", lib().cuCtxSetCurrent(ctx))


def load_module(image, origin):
    """cuModuleLoadDataEx over a PTX text or cubin image, with the JIT's logs."""
    log_size = 16384
    error_log = ctypes.create_string_buffer(log_size)
    info_log = ctypes.create_string_buffer(log_size)
    options = (ctypes.c_int * 4)(CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                                 CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES)
    values = (ctypes.c_void_p * 4)(ctypes.cast(error_log, ctypes.c_void_p).value, log_size,
                                   ctypes.cast(info_log, ctypes.c_void_p).value, log_size)
    module = ctypes.c_void_p()
    buf = ctypes.create_string_buffer(image, len(image) + 1)  # PTX must end in NUL
    code = lib().cuModuleLoadDataEx(ctypes.byref(module), buf, 4, options, values)
    log = error_log.value.decode(errors="replace").strip()
    check("cuModuleLoadDataEx", code, f"while loading {origin}" + (f"; JIT log:\n{log}" if log else ""))
    return module.value, info_log.value.decode(errors="replace").strip()


def unload_module(module):
    return lib().cuModuleUnload(module)


def get_function(module, name):
    fn = ctypes.c_void_p()
    check(f"cuModuleGetFunction('{name}')",
          lib().cuModuleGetFunction(ctypes.byref(fn), module, name.encode()))
    return fn.value


def function_attributes(function):
    out = {}
    for key, attr in FUNC_ATTRIBUTES.items():
        v = ctypes.c_int()
        check("cuFuncGetAttribute", lib().cuFuncGetAttribute(ctypes.byref(v), attr, function))
        out[key] = v.value
    return out


CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8


def allow_dynamic_shared(function, nbytes, what):
    check(f"cuFuncSetAttribute({what}, MAX_DYNAMIC_SHARED_SIZE_BYTES={nbytes})",
          lib().cuFuncSetAttribute(function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, nbytes))


_encode_tiled = None


def _tensor_map_encoder():
    global _encode_tiled
    if _encode_tiled is None:
        try:
            fn = lib().cuTensorMapEncodeTiled
        except AttributeError:
            raise ArgusError("the NVIDIA driver has no cuTensorMapEncodeTiled (TMA needs a CUDA 12 driver "
                             "or newer)") from None
        vp, u32, u64, i = ctypes.c_void_p, ctypes.c_uint32, ctypes.c_uint64, ctypes.c_int
        fn.argtypes = [vp, i, u32, vp, ctypes.POINTER(u64), ctypes.POINTER(u64), ctypes.POINTER(u32),
                       ctypes.POINTER(u32), i, i, i, i]
        fn.restype = ctypes.c_int
        _encode_tiled = fn
    return _encode_tiled


def encode_tensor_map(arg, what=""):
    """cuTensorMapEncodeTiled into a TensorMapArg (tensor_map.py)."""
    e = arg.encoding
    rank = len(e.global_dims)
    dims = (ctypes.c_uint64 * rank)(*e.global_dims)
    strides = (ctypes.c_uint64 * max(1, rank - 1))(*e.global_strides)
    box = (ctypes.c_uint32 * rank)(*e.box_dims)
    element_strides = (ctypes.c_uint32 * rank)(*e.element_strides)
    code = _tensor_map_encoder()(arg.address, e.data_type, rank, e.global_address, dims, strides, box,
                                 element_strides, e.interleave, e.swizzle, e.l2_promotion, e.oob_fill)
    check(f"cuTensorMapEncodeTiled({what or arg.tensor})", code,
          f"encoding the TMA tensor map of '{arg.tensor}': dims {e.global_dims}, strides {e.global_strides}, "
          f"box {e.box_dims} (innermost first)")


def param_array(values):
    """cuLaunchKernel's kernelParams for `values` (valid while they live)."""
    return (ctypes.c_void_p * max(1, len(values)))(*param_addresses(values))


def launch(function, grid, block, stream, values, what, shared_bytes=0, params=None):
    if params is None:
        params = param_array(values)
    check(f"cuLaunchKernel({what})",
          lib().cuLaunchKernel(function, grid[0], grid[1], grid[2], block[0], block[1], block[2],
                               shared_bytes, stream, params, None))

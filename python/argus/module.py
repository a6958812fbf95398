"""argus.load(): a compiled Argus module in torch's CUDA context, with one
callable per kernel that checks its arguments and launches on torch's current
stream."""

import os

from . import cuda
from .binding import plan_launch
from .errors import ArgusError, ArgumentError
from .meta import read_metadata
from .plan_cache import PlanCache, call_key
from .tensor_map import encode_tensor_maps


class Kernel:
    """A kernel of a loaded module: `k(x, y, out, s=1.5)`."""

    def __init__(self, module, spec, function):
        self._module = module
        self.spec = spec
        self.name = spec.name
        self._function = function
        self._plans = PlanCache()
        if spec.dynamic_shared_bytes > 0:
            cuda.allow_dynamic_shared(function, spec.dynamic_shared_bytes, spec.name)
        self.attributes = cuda.function_attributes(function)
        limit = self.attributes["max_threads_per_block"]
        if limit < spec.threads:
            raise ArgusError(f"kernel '{spec.name}' needs {spec.threads} threads per block but the compiled "
                             f"code allows at most {limit} (registers: {self.attributes['num_regs']})")

    def plan(self, *args, **kwargs):
        """Checks the arguments and returns the LaunchPlan without launching."""
        return plan_launch(self.spec, args, kwargs, self._module.device_index)

    def __call__(self, *args, **kwargs):
        stream = kwargs.pop("stream", None)
        key = call_key(args, kwargs)
        plan = self._plans.get(key)
        fresh = plan is None
        if fresh:
            plan = self.plan(*args, **kwargs)
            if plan.empty:
                return
        if stream is None:
            import torch
            stream = torch.cuda.current_stream(self._module.device_index).cuda_stream
        elif hasattr(stream, "cuda_stream"):
            stream = stream.cuda_stream
        cuda.ensure_current(self._module.context)
        if fresh:
            encode_tensor_maps(plan, lambda arg: cuda.encode_tensor_map(arg, f"{self.name}, tensor '{arg.tensor}'"))
            plan.params = cuda.param_array(plan.values)
            self._plans.put(key, plan)  # only a plan whose maps encoded is reused
        cuda.launch(self._function, plan.grid, plan.block, stream, plan.values, self.name,
                    self.spec.dynamic_shared_bytes, plan.params)

    def __repr__(self):
        return f"<argus kernel {self.spec.signature()}>"


class Module:
    """A PTX or cubin file loaded with cuModuleLoadDataEx, plus its metadata."""

    def __init__(self, path, device=None):
        import torch
        if not torch.cuda.is_available():
            raise ArgusError("torch sees no CUDA device; argus.load needs a GPU")
        self.path = path
        self.device_index = torch.cuda.current_device() if device is None else torch.device(device).index or 0
        specs = read_metadata(path)
        try:
            with open(path, "rb") as f:
                image = f.read()
        except OSError as e:
            raise ArgusError(f"cannot read '{path}' ({e.strerror})") from None
        with torch.cuda.device(self.device_index):
            # Make torch create its (primary) context before asking which is current.
            torch.cuda.init()
            torch.empty(1, device=f"cuda:{self.device_index}")
            self.context = cuda.context_for_device(self.device_index)
            self._handle, self.jit_log = cuda.load_module(image, path)
        self.kernels = {}
        for spec in specs:
            self.kernels[spec.name] = Kernel(self, spec, cuda.get_function(self._handle, spec.name))

    def __getattr__(self, name):
        kernels = self.__dict__.get("kernels", {})
        if name in kernels:
            return kernels[name]
        raise AttributeError(f"module '{self.__dict__.get('path', '?')}' has no kernel '{name}' "
                             f"(kernels: {', '.join(kernels) or 'none'})")

    def __getitem__(self, name):
        try:
            return self.kernels[name]
        except KeyError:
            raise ArgumentError(f"module '{self.path}' has no kernel '{name}' "
                                f"(kernels: {', '.join(self.kernels) or 'none'})") from None

    def __del__(self):
        handle = self.__dict__.get("_handle")
        if handle:
            try:
                cuda.unload_module(handle)
            except Exception:  # interpreter shutdown: the driver may be gone already
                pass

    def __repr__(self):
        return f"<argus module {os.path.basename(self.path)}: {', '.join(self.kernels)}>"


def load(path, device=None):
    """Loads `path` (.ptx or .cubin) and its `.meta.json` into torch's CUDA context."""
    return Module(os.fspath(path), device)

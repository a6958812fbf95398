"""Reuse of checked launch plans: a kernel called again with the same tensors
(address, shape, strides, dtype, device) and the same scalars gets the plan of
the first call, its argument checks done and its tensor maps encoded. The
checks and the encoding cost tens of microseconds of host time per call, more
than a small kernel runs on the GPU; looking a call up costs a few."""

from collections import OrderedDict

from .binding import _is_tensor_like


def call_key(args, kwargs):
    """A hashable summary of everything plan_launch reads from a call, or None
    when an argument is neither tensor-like nor a plain number (no reuse then).
    Numbers enter by type and repr, so 0.0 and -0.0 (different bits) differ."""
    parts = []
    for name, value in [(None, a) for a in args] + sorted(kwargs.items(), key=lambda kv: kv[0]):
        if _is_tensor_like(value):
            stride = value.stride() if hasattr(value, "stride") else None
            device = value.device
            part = (int(value.data_ptr()), tuple(value.shape), value.dtype,
                    getattr(device, "type", device), getattr(device, "index", None),
                    tuple(stride) if stride is not None else None, bool(value.is_contiguous()))
        elif isinstance(value, (bool, int, float)):
            part = (type(value).__name__, repr(value))
        else:
            return None
        parts.append((name, part))
    key = tuple(parts)
    try:
        hash(key)
    except TypeError:
        return None
    return key


class PlanCache:
    """The plans of the most recent distinct calls, least recently used out first."""

    def __init__(self, capacity=16):
        self.capacity = capacity
        self._plans = OrderedDict()

    def get(self, key):
        plan = self._plans.get(key) if key is not None else None
        if plan is not None:
            self._plans.move_to_end(key)
        return plan

    def put(self, key, plan):
        if key is None:
            return
        self._plans[key] = plan
        self._plans.move_to_end(key)
        while len(self._plans) > self.capacity:
            self._plans.popitem(last=False)

    def __len__(self):
        return len(self._plans)

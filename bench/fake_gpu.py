"""A pure-Python stand-in for the few torch calls bench_gpu_worker.py makes, so
that test_bench_gpu.py can run a whole worker group (checks, graph timing, the
re-check, the records) on a machine without a GPU, torch or numpy. Tensors are
strided views of a Python list; sizes must stay tiny. "Launches" (matmul,
addmm, gelu, a fake kernel) go through `launch`, which a CUDA graph being captured records and
its replay repeats, as a real graph would."""

import contextlib
import itertools
import math
import random
import time
import types

bfloat16, float16, float32, float64, bool_ = "bfloat16", "float16", "float32", "float64", "bool"
int32, int64 = "int32", "int64"
_capturing = []  # the CUDAGraph being captured, if any


def launch(work):
    """Runs `work` now, as a stream would; a graph under capture also keeps it."""
    if _capturing:
        _capturing[-1].work.append(work)
    work()


def _contiguous_strides(shape):
    strides, step = [], 1
    for extent in reversed(shape):
        strides.append(step)
        step *= extent
    return tuple(reversed(strides))


class Tensor:
    def __init__(self, storage, shape, dtype, offset=0, strides=None):
        self.storage, self.shape, self.dtype, self.offset = storage, tuple(shape), dtype, offset
        self.strides = _contiguous_strides(self.shape) if strides is None else tuple(strides)

    # -- layout
    def numel(self):
        return math.prod(self.shape)

    def stride(self, dim=None):
        return self.strides if dim is None else self.strides[dim]

    def _positions(self):
        for index in itertools.product(*(range(e) for e in self.shape)):
            yield self.offset + sum(i * s for i, s in zip(index, self.strides))

    def values(self):
        return [self.storage[p] for p in self._positions()]

    def is_contiguous(self):
        return self.strides == _contiguous_strides(self.shape)

    def t(self):
        assert len(self.shape) == 2
        return Tensor(self.storage, self.shape[::-1], self.dtype, self.offset, self.strides[::-1])

    def view(self, *shape):
        shape = tuple(shape[0]) if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else tuple(shape)
        assert self.is_contiguous() and math.prod(shape) == self.numel(), (self.shape, shape)
        return Tensor(self.storage, shape, self.dtype, self.offset)

    def __getitem__(self, key):
        """x[i] (a view of one index of the leading axis) or x[a:b] (a range of it)."""
        if isinstance(key, int):
            assert 0 <= key < self.shape[0], (key, self.shape)
            return Tensor(self.storage, self.shape[1:], self.dtype, self.offset + key * self.strides[0],
                          self.strides[1:])
        assert isinstance(key, slice) and key.step is None
        start, stop, _ = key.indices(self.shape[0])
        return Tensor(self.storage, (max(0, stop - start),) + self.shape[1:], self.dtype,
                      self.offset + start * self.strides[0], self.strides)

    def index_select(self, dim, index):
        """Rows `index` of the leading axis, copied (as torch.index_select)."""
        assert dim == 0
        rows = [self[int(i)].values() for i in index.values()]
        return Tensor([v for row in rows for v in row], (len(rows),) + self.shape[1:], self.dtype)

    def __int__(self):
        assert self.numel() == 1
        return int(self.values()[0])

    # -- values
    def to(self, dtype):
        return Tensor(self.values(), self.shape, dtype)

    def double(self):
        return self.to(float64)

    def float(self):
        return self.to(float32)

    def copy_(self, src):
        assert src.shape == self.shape, (src.shape, self.shape)
        for p, v in zip(list(self._positions()), src.values()):
            self.storage[p] = v
        return self

    def fill_(self, value):
        for p in list(self._positions()):
            self.storage[p] = value
        return self

    def __sub__(self, other):
        assert self.shape == other.shape
        return Tensor([a - b for a, b in zip(self.values(), other.values())], self.shape, self.dtype)

    def __add__(self, other):
        """Elementwise, or a rank-1 `other` broadcast along the last axis (x + bias)."""
        assert other.shape in (self.shape, self.shape[-1:]), (self.shape, other.shape)
        ov = other.values()
        return Tensor([v + ov[i % len(ov)] for i, v in enumerate(self.values())], self.shape, self.dtype)

    def __mul__(self, scale):
        assert isinstance(scale, (int, float)), "only a tensor times a number"
        return Tensor([v * scale for v in self.values()], self.shape, self.dtype)

    __rmul__ = __mul__

    def __matmul__(self, other):
        out = Tensor([0.0] * (self.shape[0] * other.shape[1]), (self.shape[0], other.shape[1]), self.dtype)
        _matmul_into(self, other, out)
        return out

    def sum(self):
        return _Scalar(sum(self.values()))

    def all(self):
        return _Scalar(all(self.values()))


class _Scalar:
    def __init__(self, value):
        self.value = value

    def item(self):
        return self.value


def _matmul_into(a, b, out):
    (m, k), (k2, n) = a.shape, b.shape
    assert k == k2 and out.shape == (m, n), (a.shape, b.shape, out.shape)
    av, bv = a.values(), b.values()
    out.copy_(Tensor([sum(av[i * k + x] * bv[x * n + j] for x in range(k)) for i in range(m) for j in range(n)],
                     (m, n), out.dtype))


def matmul(a, b, out=None):
    out = out if out is not None else Tensor([0.0] * (a.shape[0] * b.shape[1]), (a.shape[0], b.shape[1]), a.dtype)
    launch(lambda: _matmul_into(a, b, out))
    return out


def addmm(bias, a, b):
    """bias + a @ b, bias (N,) broadcast over the rows (torch.addmm with a 1-D bias)."""
    out = Tensor([0.0] * (a.shape[0] * b.shape[1]), (a.shape[0], b.shape[1]), a.dtype)

    def work():
        _matmul_into(a, b, out)
        out.copy_(out + bias)
    launch(work)
    return out


def _gelu(x):
    """The exact (erf) GELU, as F.gelu's default."""
    out = Tensor([0.0] * x.numel(), x.shape, x.dtype)
    launch(lambda: out.copy_(Tensor([0.5 * v * (1.0 + math.erf(v / math.sqrt(2.0))) for v in x.values()],
                                    x.shape, x.dtype)))
    return out


nn = types.SimpleNamespace(functional=types.SimpleNamespace(gelu=_gelu))


class Generator:
    def __init__(self, device=None):
        self.rng = random.Random(0)

    def manual_seed(self, seed):
        self.rng.seed(seed)


def tensor(data, device=None, dtype=float32):
    return Tensor(list(data), (len(data),), dtype)


def cat(tensors):
    """Along the leading axis."""
    rest = tensors[0].shape[1:]
    assert all(t.shape[1:] == rest for t in tensors)
    return Tensor([v for t in tensors for v in t.values()], (sum(t.shape[0] for t in tensors),) + rest,
                  tensors[0].dtype)


def randn(*shape, device=None, dtype=float32, generator=None):
    rng = generator.rng if generator else random
    return Tensor([rng.gauss(0.0, 1.0) for _ in range(math.prod(shape))], shape, dtype)


def full(shape, value, device=None, dtype=float32):
    return Tensor([value] * math.prod(shape), shape, dtype)


def empty(*shape, device=None, dtype=float32):
    shape = tuple(shape[0]) if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape
    return full(shape, 0.0, dtype=dtype)


def isnan(x):
    return Tensor([v != v for v in x.values()], x.shape, bool_)


def nan_to_num(x, nan=0.0):
    return Tensor([nan if v != v else v for v in x.values()], x.shape, x.dtype)


linalg = types.SimpleNamespace(vector_norm=lambda x, dtype=None: _Scalar(math.sqrt(sum(v * v for v in x.values()))))


class CUDAGraph:
    def __init__(self):
        self.work = []

    def replay(self):
        for work in self.work:
            work()


class Event:
    def __init__(self, enable_timing=False):
        self.when = None

    def record(self):
        self.when = time.perf_counter()

    def elapsed_time(self, end):
        return (end.when - self.when) * 1e3


@contextlib.contextmanager
def _graph(g):
    _capturing.append(g)
    try:
        yield g
    finally:
        _capturing.pop()


cuda = types.SimpleNamespace(synchronize=lambda: None, empty_cache=lambda: None, CUDAGraph=CUDAGraph, Event=Event,
                             graph=_graph, is_available=lambda: True)
backends = types.SimpleNamespace(cuda=types.SimpleNamespace(matmul=types.SimpleNamespace(allow_tf32=True)),
                                 cudnn=types.SimpleNamespace(allow_tf32=True))
__version__ = "fake"

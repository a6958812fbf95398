"""How bench_gpu.py calls the Argus kernels it benchmarks: which parameter of
`gemm_tc` / `attention` is which operand, read from the kernel's .meta.json.
Pure Python (no torch), so the dry run can check the bindings on a machine
without a GPU.

GEMM: the tensors named A, B, C (any case), else the first three tensors in
order; A (M, K) and B (K, N) inputs, C (M, N) output, C's dtype as compiled.
Scalars named alpha / beta get 1 / 0. The "A @ W^T" form (a linear layer,
transposed_b=True) takes W (N, K) instead of B, named W or B. A kernel that
copies an operand with TMA (a "tensor_maps" entry) needs that operand's rows to
be a multiple of 16 bytes (K a multiple of 8 for bf16): other K are n/a. A store
map ("store": true) is not such a need: the kernel stores C without it. The
fused-epilogue form (bias=True, C = f(A @ B + bias)) also takes the bias, the
rank-1 tensor of extent N: the one named bias, else the only rank-1 tensor; A, B,
C are then matched among the others as above.

MoE grouped GEMM: the tensors named X, W, block_expert (or expert_ids) and Y, else
the first four in order: X (T_pad, K) and W (E, N, K) bf16, block_expert (T_pad / BM,)
i32, Y (T_pad, N). The build's BM constant is the padding the layout must use, so a
case padded to another BM is n/a for it; TMA operands need K a multiple of 8 as above.

Attention: the tensors named q, k, v and o (or out / y), else the first four in
order; rank 4 means (B, H, S, D), rank 3 (B*H, S, D), rank 2 (B*H*S, D). Further
tensors (a log-sum-exp output, say) are allocated as scratch when their extents
are known. A scalar whose name has 'scale' gets 1/sqrt(D) (times log2(e) when
the name has 'log2'); one named causal / is_causal selects causal masking. A
kernel without such a scalar is causal when its constants say so (CAUSAL=1).
"""

import math

LOG2E = 1.4426950408889634



def tma_loaded_params(spec):
    """The parameters the kernel reads with TMA: their rows must be 16-byte multiples.
    A store map ("store": true) is optional: the kernel stores without it otherwise."""
    return {m.param for m in getattr(spec, "tensor_maps", []) if not getattr(m, "store", False)}


def tma_text(spec, loaded):
    """'; TMA for A, W; TMA stores for C at its edges (16-byte rows)' (the configuration column's note)."""
    stored = sorted({m.param for m in getattr(spec, "tensor_maps", []) if getattr(m, "store", False)})
    text = f"; TMA for {', '.join(sorted(loaded))}" if loaded else ""
    return text + (f"; TMA stores for {', '.join(stored)} at its edges (16-byte rows)" if stored else "")

class Unsupported(Exception):
    """The kernel cannot run this case (its metadata says so): a visible n/a row."""


class MetadataMismatch(Exception):
    """The kernel's parameters do not look like the workload at all."""


def _by_name(tensors, names):
    for p in tensors:
        if p.name.lower() in names:
            return p
    return None


def _dims_text(p):
    return "(" + ", ".join(str(d.get("const", d.get("size"))) for d in p.dims) + ")"


ELEMENT_BYTES = {"bf16": 2, "f16": 2, "f32": 4, "f64": 8, "i8": 1, "u8": 1, "f8e4m3": 1, "f8e5m2": 1}
TMA_ROW_ALIGNMENT = 16  # bytes: cuTensorMapEncodeTiled's rule for every stride


class GemmBinding:
    """C = A @ B, or C = A @ W^T with transposed_b (B is then W, stored (N, K)); with
    bias, C = f(A @ B + bias) with bias (N,) (a fused epilogue: gemm_bias_gelu)."""

    def __init__(self, spec, transposed_b=False, bias=False):
        self.spec = spec
        self.transposed_b = transposed_b
        tensors = [p for p in spec.user_params if p.kind == "tensor"]
        self.bias = self._find_bias(tensors) if bias else None
        tensors = [p for p in tensors if p is not self.bias]
        b_names = {"w", "b"} if transposed_b else {"b"}
        a, b, c = _by_name(tensors, {"a"}), _by_name(tensors, b_names), _by_name(tensors, {"c"})
        if not (a and b and c):
            if len(tensors) < 3:
                raise MetadataMismatch(f"{spec.name} has {len(tensors)} tensor parameters; a GEMM needs A, B, C")
            a, b, c = tensors[:3]
        for p in (a, b, c):
            if len(p.dims) != 2:
                raise MetadataMismatch(f"{spec.name}: tensor '{p.name}' has rank {len(p.dims)}, expected 2")
        self.a, self.b, self.c = a, b, c
        for p in tensors:
            if p not in (a, b, c):
                raise MetadataMismatch(f"{spec.name}: unexpected extra tensor '{p.name}'")
        self.scalars = []
        for p in spec.user_params:
            if p.kind != "scalar":
                continue
            if p.name.lower() == "alpha":
                self.scalars.append((p.name, 1.0))
            elif p.name.lower() == "beta":
                self.scalars.append((p.name, 0.0))
            else:
                raise MetadataMismatch(f"{spec.name}: do not know what to pass for scalar '{p.name}'")
        if a.dtype != b.dtype:
            raise MetadataMismatch(f"{spec.name}: A is {a.dtype} but {b.name} is {b.dtype}")
        self._check_shared_k()
        if self.bias is not None:
            self._check_bias()
        self.in_dtype, self.out_dtype = a.dtype, c.dtype
        self.tma_params = tma_loaded_params(spec)

    def _find_bias(self, tensors):
        """The bias: the tensor named bias, else the only rank-1 tensor."""
        bias = _by_name(tensors, {"bias"})
        if bias is None:
            vectors = [p for p in tensors if len(p.dims) == 1]
            if len(vectors) != 1:
                raise MetadataMismatch(f"{self.spec.name} has {len(vectors)} rank-1 tensor parameters; a GEMM with a "
                                       f"bias epilogue needs one, the bias (N,)")
            bias = vectors[0]
        if len(bias.dims) != 1:
            raise MetadataMismatch(f"{self.spec.name}: bias '{bias.name}' has rank {len(bias.dims)}, expected 1")
        return bias

    def _check_bias(self):
        """The bias is added along C's rows: its extent must be N (C's second), and the
        peers add it in the inputs' dtype."""
        bias_n, c_n = self.bias.dims[0].get("size"), self.c.dims[1].get("size")
        if bias_n and c_n and bias_n != c_n:
            raise MetadataMismatch(f"{self.spec.name}: bias {self.bias.name}{_dims_text(self.bias)} is not along "
                                   f"{self.c.name}{_dims_text(self.c)}'s columns ({c_n})")
        if self.bias.dtype != self.a.dtype:
            raise MetadataMismatch(f"{self.spec.name}: A is {self.a.dtype} but bias '{self.bias.name}' is "
                                   f"{self.bias.dtype}")

    def _check_shared_k(self):
        """With named extents, A's K must be B's K in the position the form expects:
        a kernel of the other form would otherwise be run on transposed data."""
        a_k, b_k = self.a.dims[1].get("size"), self.b.dims[1 if self.transposed_b else 0].get("size")
        if a_k and b_k and a_k != b_k:
            want, other = ("(N, K)", "C = A @ B with B (K, N)") if self.transposed_b else \
                ("(K, N)", "C = A @ W^T with W (N, K)")
            raise MetadataMismatch(f"{self.spec.name}: {self.a.name}{_dims_text(self.a)} and "
                                   f"{self.b.name}{_dims_text(self.b)} do not share K as {self.b.name} {want} "
                                   f"would; is it a kernel of the other form ({other})?")

    def b_shape(self, n, k):
        return (n, k) if self.transposed_b else (k, n)

    def check_shape(self, m, n, k):
        """Raises Unsupported when a dimension is a constant that differs, or when TMA
        cannot describe an operand of this size (rows not a multiple of 16 bytes)."""
        operands = [(self.a, (m, k)), (self.b, self.b_shape(n, k)), (self.c, (m, n))]
        if self.bias is not None:
            operands.append((self.bias, (n,)))
        for p, shape in operands:
            for axis, (d, extent) in enumerate(zip(p.dims, shape)):
                if "const" in d and int(d["const"]) != extent:
                    raise Unsupported(f"{self.spec.name} was compiled for {p.name}.shape[{axis}] = {d['const']}")
            row_bytes = shape[-1] * ELEMENT_BYTES.get(p.dtype, 1)
            if p.name in self.tma_params and row_bytes % TMA_ROW_ALIGNMENT:
                raise Unsupported(f"{self.spec.name} copies {p.name} with TMA, which needs rows that are a multiple "
                                  f"of {TMA_ROW_ALIGNMENT} bytes; a row of {shape[-1]} {p.dtype} is {row_bytes}")

    def args(self, a, b, c, bias=None):
        """Positional arguments in the kernel's order; bias only for the bias form."""
        by_name = {self.a.name: a, self.b.name: b, self.c.name: c}
        if self.bias is not None:
            by_name[self.bias.name] = bias
        by_name.update(dict(self.scalars))
        return [by_name[p.name] for p in self.spec.user_params]

    def describe(self):
        tma = tma_text(self.spec, self.tma_params)
        bias = f"bias={self.bias.name}{_dims_text(self.bias)} " if self.bias is not None else ""
        return (f"{self.spec.signature()}: A={self.a.name}{_dims_text(self.a)} "
                f"{'W' if self.transposed_b else 'B'}={self.b.name}{_dims_text(self.b)} {bias}"
                f"C={self.c.name}{_dims_text(self.c)} {self.out_dtype}{tma}; grid {', '.join(self.spec.grid_text)}; "
                f"{self.spec.threads} threads; {self.spec.static_shared_bytes} B shared")


class AttentionBinding:
    def __init__(self, spec):
        self.spec = spec
        tensors = [p for p in spec.user_params if p.kind == "tensor"]
        q, k, v = (_by_name(tensors, {n}) for n in ("q", "k", "v"))
        o = _by_name(tensors, {"o", "out", "y", "output"})
        if not (q and k and v and o):
            if len(tensors) < 4:
                raise MetadataMismatch(f"{spec.name} has {len(tensors)} tensor parameters; attention needs q, k, v, o")
            q, k, v, o = tensors[:4]
        self.q, self.k, self.v, self.o = q, k, v, o
        ranks = {len(p.dims) for p in (q, k, v, o)}
        if len(ranks) != 1 or not ranks <= {2, 3, 4}:
            raise MetadataMismatch(f"{spec.name}: q, k, v, o have ranks {[len(p.dims) for p in (q, k, v, o)]}; "
                                   f"expected all 4 (B, H, S, D), 3 (B*H, S, D) or 2 (B*H*S, D)")
        self.rank = ranks.pop()
        self.extra = [p for p in tensors if p not in (q, k, v, o)]
        self.scale_param, self.scale_log2, self.causal_param = None, False, None
        for p in spec.user_params:
            if p.kind != "scalar":
                continue
            low = p.name.lower()
            if low in ("causal", "is_causal"):
                self.causal_param = p
            elif "scale" in low:
                self.scale_param, self.scale_log2 = p, "log2" in low
            else:
                raise MetadataMismatch(f"{spec.name}: do not know what to pass for scalar '{p.name}'")
        consts = {key.lower(): value for key, value in spec.constants.items()}
        self.compiled_causal = bool(consts.get("causal", consts.get("is_causal", False)))
        self.in_dtype, self.out_dtype = q.dtype, o.dtype

    def supports_causal(self, causal):
        return self.causal_param is not None or self.compiled_causal == causal

    def shape_for(self, b, h, s, d):
        return {4: (b, h, s, d), 3: (b * h, s, d), 2: (b * h * s, d)}[self.rank]

    def check_shape(self, b, h, s, d, causal):
        if not self.supports_causal(causal):
            raise Unsupported(f"{self.spec.name} is compiled {'causal' if self.compiled_causal else 'non-causal'}")
        shape = self.shape_for(b, h, s, d)
        for p in (self.q, self.k, self.v, self.o):
            for axis, (dim, extent) in enumerate(zip(p.dims, shape)):
                if "const" in dim and int(dim["const"]) != extent:
                    raise Unsupported(f"{self.spec.name} was compiled for {p.name}.shape[{axis}] = {dim['const']}")

    def sizes_for(self, b, h, s, d):
        sizes = {}
        for dim, extent in zip(self.q.dims, self.shape_for(b, h, s, d)):
            if "size" in dim:
                sizes[dim["size"]] = extent
        return sizes

    def extra_shapes(self, b, h, s, d):
        """{name: shape} of the scratch tensors; Unsupported if an extent is unknown."""
        sizes, out = self.sizes_for(b, h, s, d), {}
        for p in self.extra:
            shape = []
            for dim in p.dims:
                if "const" in dim:
                    shape.append(int(dim["const"]))
                elif dim.get("size") in sizes:
                    shape.append(sizes[dim["size"]])
                else:
                    raise Unsupported(f"{self.spec.name}: extent '{dim.get('size')}' of '{p.name}' is not one of q's")
            out[p.name] = (tuple(shape), p.dtype)
        return out

    def args(self, q, k, v, o, extra, d, causal):
        by_name = {self.q.name: q, self.k.name: k, self.v.name: v, self.o.name: o}
        by_name.update(extra)
        if self.scale_param is not None:
            by_name[self.scale_param.name] = (LOG2E if self.scale_log2 else 1.0) / math.sqrt(d)
        if self.causal_param is not None:
            by_name[self.causal_param.name] = (bool(causal) if self.causal_param.dtype == "bool"
                                               else int(bool(causal)))
        return [by_name[p.name] for p in self.spec.user_params]

    def describe(self):
        causal = (f"causal from scalar '{self.causal_param.name}'" if self.causal_param else
                  "compiled causal" if self.compiled_causal else "non-causal")
        return (f"{self.spec.signature()}: rank {self.rank}, {self.in_dtype} in, {self.out_dtype} out, {causal}, "
                f"scale {'(log2) ' if self.scale_log2 else ''}{self.scale_param.name if self.scale_param else 'none'}; "
                f"grid {', '.join(self.spec.grid_text)}; {self.spec.threads} threads; "
                f"{self.spec.static_shared_bytes} B shared")


class MoeBinding:
    """Y[rows of block b] = X[rows of block b] @ W[block_expert[b]]^T (moe_gemm)."""

    def __init__(self, spec):
        self.spec = spec
        tensors = [p for p in spec.user_params if p.kind == "tensor"]
        x, w, y = (_by_name(tensors, {n}) for n in ("x", "w", "y"))
        experts = _by_name(tensors, {"block_expert", "expert_ids", "block_experts"})
        if not (x and w and y and experts):
            if len(tensors) < 4:
                raise MetadataMismatch(f"{spec.name} has {len(tensors)} tensor parameters; a grouped GEMM needs "
                                       f"X, W, block_expert, Y")
            x, w, experts, y = tensors[:4]
        for p, rank in ((x, 2), (w, 3), (experts, 1), (y, 2)):
            if len(p.dims) != rank:
                raise MetadataMismatch(f"{spec.name}: tensor '{p.name}' has rank {len(p.dims)}, expected {rank}")
        for p in tensors:
            if p not in (x, w, experts, y):
                raise MetadataMismatch(f"{spec.name}: unexpected extra tensor '{p.name}'")
        for p in spec.user_params:
            if p.kind == "scalar":
                raise MetadataMismatch(f"{spec.name}: do not know what to pass for scalar '{p.name}'")
        if experts.dtype != "i32":
            raise MetadataMismatch(f"{spec.name}: '{experts.name}' is {experts.dtype}, expected i32 expert ids")
        if x.dtype != w.dtype:
            raise MetadataMismatch(f"{spec.name}: X is {x.dtype} but {w.name} is {w.dtype}")
        consts = {key.upper(): value for key, value in spec.constants.items()}
        if "BM" not in consts:
            raise MetadataMismatch(f"{spec.name}: no BM constant, the rows of a block (the layout's padding)")
        self.block_rows = int(consts["BM"])
        self.x, self.w, self.experts, self.y = x, w, experts, y
        self.in_dtype, self.out_dtype = x.dtype, y.dtype
        self.tma_params = tma_loaded_params(spec)

    def check_shape(self, experts, topk, tokens, n, k, block_rows, padding_blocks=0):
        """Raises Unsupported when the case is padded to another BM, an extent is a
        different constant, or TMA cannot describe an operand (rows not 16-byte multiples)."""
        if block_rows != self.block_rows:
            raise Unsupported(f"{self.spec.name} was compiled for BM={self.block_rows}, the case is padded to "
                              f"BM={block_rows}")
        for p, shape in ((self.x, (None, k)), (self.w, (experts, n, k)), (self.y, (None, n))):
            for axis, (d, extent) in enumerate(zip(p.dims, shape)):
                if "const" in d and extent is not None and int(d["const"]) != extent:
                    raise Unsupported(f"{self.spec.name} was compiled for {p.name}.shape[{axis}] = {d['const']}")
            row_bytes = shape[-1] * ELEMENT_BYTES.get(p.dtype, 1)
            if p.name in self.tma_params and row_bytes % TMA_ROW_ALIGNMENT:
                raise Unsupported(f"{self.spec.name} copies {p.name} with TMA, which needs rows that are a multiple "
                                  f"of {TMA_ROW_ALIGNMENT} bytes; a row of {shape[-1]} {p.dtype} is {row_bytes}")

    def args(self, x, w, block_expert, y):
        by_name = {self.x.name: x, self.w.name: w, self.experts.name: block_expert, self.y.name: y}
        return [by_name[p.name] for p in self.spec.user_params]

    def describe(self):
        tma = tma_text(self.spec, self.tma_params)
        return (f"{self.spec.signature()}: X={self.x.name}{_dims_text(self.x)} W={self.w.name}{_dims_text(self.w)} "
                f"block_expert={self.experts.name}{_dims_text(self.experts)} Y={self.y.name}{_dims_text(self.y)} "
                f"{self.out_dtype}; BM={self.block_rows}{tma}; grid {', '.join(self.spec.grid_text)}; "
                f"{self.spec.threads} threads; {self.spec.static_shared_bytes} B shared")


class RowBinding:
    """Row kernels (softmax, layernorm, RMSNorm) over X (M, N): the tensors named x, y
    (else the first and the last tensor) and, where the kernel has them, w and b (N,);
    a scalar named eps gets the workload's epsilon. The whole row must fit in the
    kernel's BLOCK constant (its `require(N <= BLOCK)`), else the case is n/a."""

    def __init__(self, spec, workload):
        self.spec, self.workload = spec, workload
        tensors = [p for p in spec.user_params if p.kind == "tensor"]
        if len(tensors) < 2:
            raise MetadataMismatch(f"{spec.name} has {len(tensors)} tensor parameters; a row kernel needs x and y")
        self.x = _by_name(tensors, {"x"}) or tensors[0]
        self.y = _by_name(tensors, {"y", "out", "output"}) or tensors[-1]
        self.w = _by_name(tensors, {"w", "weight"})
        self.b = _by_name(tensors, {"b", "bias"})
        want = {"softmax": (), "layernorm": ("w", "b"), "rmsnorm": ("w",)}[workload]
        for name in want:
            if getattr(self, name) is None:
                raise MetadataMismatch(f"{spec.name}: a {workload} kernel needs a tensor '{name}'")
        for p in tensors:
            if p not in (self.x, self.y, self.w, self.b):
                raise MetadataMismatch(f"{spec.name}: unexpected extra tensor '{p.name}'")
        self.eps = None
        for p in spec.user_params:
            if p.kind == "scalar":
                if p.name.lower() != "eps":
                    raise MetadataMismatch(f"{spec.name}: do not know what to pass for scalar '{p.name}'")
                self.eps = p
        consts = {key.upper(): value for key, value in spec.constants.items()}
        self.block = int(consts.get("BLOCK", consts.get("BN", 0))) or None
        self.in_dtype, self.out_dtype = self.x.dtype, self.y.dtype

    def check_shape(self, m, n, *rest):
        if self.block is not None and n > self.block:
            raise Unsupported(f"{self.spec.name} was compiled for rows of at most BLOCK={self.block} elements")

    def args(self, x, y, w=None, b=None, eps=1e-5):
        by_name = {self.x.name: x, self.y.name: y}
        if self.w is not None:
            by_name[self.w.name] = w
        if self.b is not None:
            by_name[self.b.name] = b
        if self.eps is not None:
            by_name[self.eps.name] = eps
        return [by_name[p.name] for p in self.spec.user_params]

    def config(self):
        return f"BLOCK={self.block}, warps={self.spec.warps}"

    def describe(self):
        return (f"{self.spec.signature()}: {self.config()}; grid {', '.join(self.spec.grid_text)}; "
                f"{self.spec.threads} threads; {self.spec.static_shared_bytes} B shared")

"""The Triton peer of the Argus tensor-core GEMM: C = A @ B with A (M, K) and
B (K, N) bf16, fp32 accumulation, C bf16 or fp32. Any strides: the Hopper
workload (C = A @ W^T) passes B = W.t(), W (N, K) row-major, i.e. strides (1, K). A standard tiled
tl.dot kernel (grouped program order for L2 reuse, masked edges, so any M, N, K
works) autotuned over a few block shapes that suit Hopper. Imported only on the
GPU machine: `import triton` happens here, never in the dry run.

`matmul_mma_sync` is the same kernel through Triton's Ampere passes (mma.sync,
ldmatrix, cp.async; no wgmma or TMA), with the cubin built for the GPU at hand:
the like-for-like peer of Argus's sm_80-style `gemm_tc`.

`matmul_bias_gelu` is the same GEMM with a linear layer's epilogue fused, C =
gelu(A @ B + bias), as Argus's `gemm_bias_gelu` computes it: the bias (N,) loaded
once per tile and added to the fp32 accumulator, the exact (erf) GELU in fp32, then
the cast to C's dtype. Both kernels share the tile loop (`_gemm_tile`) and the masked
store (`_store_tile`); they differ only in what happens between the two.
"""

import contextlib
import os

import torch
import triton
import triton.backends.nvidia.compiler as _nvidia
import triton.language as tl

# Block shapes that do well on H100/H200 for bf16 (Triton's own matmul tutorial
# and its Hopper tuning): 128x256 and 256x128 with 8 warps and 3 stages, 128x128
# with 4 stages; a 64-wide one for the small-K or small-M cases.
CONFIGS = [
    triton.Config({"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "GROUP_M": 8}, num_stages=3, num_warps=8),
    triton.Config({"BLOCK_M": 256, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8}, num_stages=3, num_warps=8),
    triton.Config({"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8}, num_stages=4, num_warps=4),
    triton.Config({"BLOCK_M": 128, "BLOCK_N": 64, "BLOCK_K": 64, "GROUP_M": 8}, num_stages=4, num_warps=4),
]


# The best of these on the H200 with the Ampere passes (measured 2026-11-30): 128 x 128 tiles
# with BK = 32 and 4 stages, or BK = 64 and 3 stages; 128 x 256 with 8 warps.
MMA_SYNC_CONFIGS = [
    triton.Config({"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 32, "GROUP_M": 8}, num_stages=4, num_warps=4),
    triton.Config({"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8}, num_stages=3, num_warps=4),
    triton.Config({"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "GROUP_M": 8}, num_stages=4, num_warps=8),
    triton.Config({"BLOCK_M": 128, "BLOCK_N": 64, "BLOCK_K": 64, "GROUP_M": 8}, num_stages=4, num_warps=4),
]


@triton.jit
def _gemm_tile(a_ptr, b_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
               BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    """This program's (BLOCK_M, BLOCK_N) tile of A @ B in fp32, with the tile's row and
    column indices (past M and N at the edges: the store masks them)."""
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    # Grouped ordering: GROUP_M row-blocks share each column-block of B while it is in L2.
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m

    # Rows/columns past the edge wrap (% M, % N) so the loads need no M/N mask;
    # the store is masked, so the wrapped values are never written.
    offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=offs_k[None, :] < k_left, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < k_left, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    return acc, offs_cm, offs_cn


@triton.jit
def _store_tile(c_ptr, values, offs_cm, offs_cn, M, N, stride_cm, stride_cn):
    """values (fp32) cast to C's dtype, stored where the tile is inside (M, N)."""
    c_ptrs = c_ptr + offs_cm[:, None] * stride_cm + offs_cn[None, :] * stride_cn
    mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    tl.store(c_ptrs, values.to(c_ptr.dtype.element_ty), mask=mask)


def _gemm_source(a_ptr, b_ptr, c_ptr, M, N, K,
                 stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                 BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                 GROUP_M: tl.constexpr):
    acc, offs_cm, offs_cn = _gemm_tile(a_ptr, b_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                                       BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M)
    _store_tile(c_ptr, acc, offs_cm, offs_cn, M, N, stride_cm, stride_cn)


def _gemm_bias_gelu_source(a_ptr, b_ptr, bias_ptr, c_ptr, M, N, K,
                           stride_am, stride_ak, stride_bk, stride_bn, stride_bias, stride_cm, stride_cn,
                           BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                           GROUP_M: tl.constexpr):
    acc, offs_cm, offs_cn = _gemm_tile(a_ptr, b_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                                       BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M)
    # One load of the tile's BLOCK_N biases, broadcast over its rows.
    bias = tl.load(bias_ptr + offs_cn * stride_bias, mask=offs_cn < N, other=0.0)
    x = acc + bias.to(tl.float32)[None, :]
    gelu = 0.5 * x * (1.0 + tl.math.erf(x * 0.7071067811865476))  # exact GELU: x * Phi(x), erf(x / sqrt(2))
    _store_tile(c_ptr, gelu, offs_cm, offs_cn, M, N, stride_cm, stride_cn)


_gemm_kernel = triton.autotune(configs=CONFIGS, key=["M", "N", "K"])(triton.jit(_gemm_source))
_gemm_kernel_mma_sync = triton.autotune(configs=MMA_SYNC_CONFIGS, key=["M", "N", "K"])(triton.jit(_gemm_source))
_gemm_bias_gelu_kernel = triton.autotune(configs=CONFIGS, key=["M", "N", "K"])(triton.jit(_gemm_bias_gelu_source))

# TRITON_OVERRIDE_ARCH=sm80 selects the Ampere passes but would also build the cubin for
# sm_80, which a Hopper GPU cannot load; while it is set by _ampere_passes, the cubin is
# built for the current device instead (its PTX, .target sm_80, compiles for any later SM).
_ptxas_arch = _nvidia.sm_arch_from_capability
_OVERRIDE = "TRITON_OVERRIDE_ARCH"


def _cubin_arch(capability):
    if os.environ.get(_OVERRIDE) == "sm80" and capability == 80:
        major, minor = torch.cuda.get_device_capability()
        return _ptxas_arch(10 * major + minor)
    return _ptxas_arch(capability)


_nvidia.sm_arch_from_capability = _cubin_arch


@contextlib.contextmanager
def _ampere_passes():
    before = os.environ.get(_OVERRIDE)
    os.environ[_OVERRIDE] = "sm80"
    try:
        yield
    finally:
        if before is None:
            del os.environ[_OVERRIDE]
        else:
            os.environ[_OVERRIDE] = before


def _grid(M, N):
    """One program per output tile of the config the autotuner tries."""
    return lambda meta: (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]),)


def matmul(a, b, out):
    """out = a @ b; a (M, K), b (K, N) bf16; out (M, N) bf16 or fp32, preallocated."""
    M, K = a.shape
    K2, N = b.shape
    assert K == K2 and tuple(out.shape) == (M, N), (a.shape, b.shape, out.shape)
    _gemm_kernel[_grid(M, N)](a, b, out, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                              out.stride(0), out.stride(1))
    return out


def matmul_mma_sync(a, b, out):
    """As matmul, through Triton's Ampere (mma.sync) passes. Raises RuntimeError when the
    compiled kernel holds wgmma after all (a Triton that ignores TRITON_OVERRIDE_ARCH)."""
    M, K = a.shape
    K2, N = b.shape
    assert K == K2 and tuple(out.shape) == (M, N), (a.shape, b.shape, out.shape)
    with _ampere_passes():
        compiled = _gemm_kernel_mma_sync[_grid(M, N)](a, b, out, M, N, K, a.stride(0), a.stride(1),
                                                      b.stride(0), b.stride(1), out.stride(0), out.stride(1))
    ptx = getattr(compiled, "asm", {}).get("ptx", "")
    if "wgmma" in ptx or (ptx and "mma.sync" not in ptx):
        raise RuntimeError("Triton did not build its mma.sync kernel (TRITON_OVERRIDE_ARCH=sm80 ignored?)")
    return out


def matmul_bias_gelu(a, b, bias, out):
    """out = gelu(a @ b + bias), the exact GELU in fp32; a (M, K), b (K, N), bias (N,) bf16;
    out (M, N) bf16 or fp32, preallocated."""
    M, K = a.shape
    K2, N = b.shape
    assert K == K2 and tuple(bias.shape) == (N,) and tuple(out.shape) == (M, N), \
        (a.shape, b.shape, bias.shape, out.shape)
    _gemm_bias_gelu_kernel[_grid(M, N)](a, b, bias, out, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                                        bias.stride(0), out.stride(0), out.stride(1))
    return out


def best_config_bias_gelu(M, N, K):
    return best_config(M, N, K, _gemm_bias_gelu_kernel)


def best_config_mma_sync(M, N, K):
    return best_config(M, N, K, _gemm_kernel_mma_sync)


def best_config(M, N, K, kernel=None):
    """The config the autotuner picked for this key (after a first call), as text."""
    kernel = kernel or _gemm_kernel
    cfg = kernel.cache.get((M, N, K)) if hasattr(kernel, "cache") else None
    if cfg is None:
        for key, value in getattr(kernel, "cache", {}).items():
            if tuple(key[:3]) == (M, N, K):
                cfg = value
                break
    if cfg is None:
        return None
    return f"{cfg.kwargs} stages={cfg.num_stages} warps={cfg.num_warps}"


if __name__ == "__main__":
    a = torch.randn(1000, 520, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(520, 1003, device="cuda", dtype=torch.bfloat16)
    c = torch.empty(1000, 1003, device="cuda", dtype=torch.float32)
    ref = a.double() @ b.double()
    matmul(a, b, c)
    print("rel. error", float((c.double() - ref).norm() / ref.norm()), best_config(1000, 1003, 520))
    matmul_mma_sync(a, b, c)
    print("mma.sync: rel. error", float((c.double() - ref).norm() / ref.norm()), best_config_mma_sync(1000, 1003, 520))
    bias = torch.randn(1003, device="cuda", dtype=torch.bfloat16)
    ref = torch.nn.functional.gelu(ref + bias.double())
    matmul_bias_gelu(a, b, bias, c)
    print("bias + gelu: rel. error", float((c.double() - ref).norm() / ref.norm()),
          best_config_bias_gelu(1000, 1003, 520))

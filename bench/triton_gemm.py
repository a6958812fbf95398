"""The Triton peer of the Argus tensor-core GEMM: C = A @ B with A (M, K) and
B (K, N) bf16, fp32 accumulation, C bf16 or fp32. Any strides: the Hopper
workload (C = A @ W^T) passes B = W.t(), W (N, K) row-major, i.e. strides (1, K). A standard tiled
tl.dot kernel (grouped program order for L2 reuse, masked edges, so any M, N, K
works) autotuned over a few block shapes that suit Hopper. Imported only on the
GPU machine: `import triton` happens here, never in the dry run.
"""

import torch
import triton
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


@triton.autotune(configs=CONFIGS, key=["M", "N", "K"])
@triton.jit
def _gemm_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                 stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                 BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                 GROUP_M: tl.constexpr):
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
    # the store below is masked, so the wrapped values are never written.
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
    c_ptrs = c_ptr + offs_cm[:, None] * stride_cm + offs_cn[None, :] * stride_cn
    mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=mask)


def matmul(a, b, out):
    """out = a @ b; a (M, K), b (K, N) bf16; out (M, N) bf16 or fp32, preallocated."""
    M, K = a.shape
    K2, N = b.shape
    assert K == K2 and tuple(out.shape) == (M, N), (a.shape, b.shape, out.shape)
    grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]),)  # noqa: E731
    _gemm_kernel[grid](a, b, out, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                       out.stride(0), out.stride(1))
    return out


def best_config(M, N, K):
    """The config the autotuner picked for this key (after a first call), as text."""
    cfg = _gemm_kernel.cache.get((M, N, K)) if hasattr(_gemm_kernel, "cache") else None
    if cfg is None:
        for key, value in getattr(_gemm_kernel, "cache", {}).items():
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
    matmul(a, b, c)
    ref = a.double() @ b.double()
    print("rel. error", float((c.double() - ref).norm() / ref.norm()), best_config(1000, 1003, 520))

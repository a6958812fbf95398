"""The Triton peer of the Argus MoE grouped GEMM (examples/moe_gemm.ag), written the way
vLLM's fused_moe kernel is: the token-expert pairs are sorted by expert and padded per
expert to a multiple of BLOCK_M (moe_align_block_size's layout), so each program reads
the expert of its block of BLOCK_M rows from block_expert, skips a padding block
(expert < 0 or >= E), and multiplies its rows of X (T_pad, K) by W[e]^T (W (E, N, K),
K-major), fp32 accumulation, Y (T_pad, N) bf16. BLOCK_M is the layout's padding, fixed
by the caller; BLOCK_N, BLOCK_K, the warps and the stages are autotuned over a few
configs that suit Hopper. Imported only on the GPU machine: `import triton` happens
here, never in the dry run.
"""

import torch
import triton
import triton.language as tl

# BLOCK_M is not here: it is the layout's padding. 128-wide N tiles with 64-deep K for
# the large cases (Triton's Hopper matmul choices), 64-wide ones for the decode case
# where few blocks exist and more programs keep the SMs busy.
CONFIGS = [
    triton.Config({"BLOCK_N": 256, "BLOCK_K": 64, "GROUP_M": 8}, num_stages=3, num_warps=8),
    triton.Config({"BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8}, num_stages=4, num_warps=4),
    triton.Config({"BLOCK_N": 128, "BLOCK_K": 128, "GROUP_M": 8}, num_stages=3, num_warps=8),
    triton.Config({"BLOCK_N": 64, "BLOCK_K": 128, "GROUP_M": 1}, num_stages=4, num_warps=4),
    triton.Config({"BLOCK_N": 64, "BLOCK_K": 64, "GROUP_M": 1}, num_stages=5, num_warps=4),
]


@triton.autotune(configs=CONFIGS, key=["N", "K", "num_blocks"])
@triton.jit
def _moe_kernel(x_ptr, w_ptr, be_ptr, y_ptr, N, K, E, num_blocks,
                stride_xm, stride_we, stride_wn, stride_ym,
                BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    pid = tl.program_id(0)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    # Grouped ordering: GROUP_M row blocks (mostly of one expert) share each column block
    # of that expert's W while it is in L2.
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_blocks - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m

    expert = tl.load(be_ptr + pid_m)
    if (expert < 0) | (expert >= E):  # a padding block: its rows belong to no token
        return
    # Every block lies inside X (T_pad = num_blocks * BLOCK_M): rows need no mask. Columns
    # past N wrap (% N) so the loads need no mask; the store below is masked.
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    x_ptrs = x_ptr + offs_m[:, None].to(tl.int64) * stride_xm + offs_k[None, :]
    # W[e]^T as a (BLOCK_K, BLOCK_N) tile: element (k, n) is W[e, n, k].
    w_ptrs = w_ptr + expert.to(tl.int64) * stride_we + offs_n[None, :] * stride_wn + offs_k[:, None]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        x = tl.load(x_ptrs, mask=offs_k[None, :] < k_left, other=0.0)
        w = tl.load(w_ptrs, mask=offs_k[:, None] < k_left, other=0.0)
        acc = tl.dot(x, w, acc)
        x_ptrs += BLOCK_K
        w_ptrs += BLOCK_K
    offs_yn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    y_ptrs = y_ptr + offs_m[:, None].to(tl.int64) * stride_ym + offs_yn[None, :]
    tl.store(y_ptrs, acc.to(y_ptr.dtype.element_ty), mask=offs_yn[None, :] < N)


def moe_gemm(x, w, block_expert, y, block_m):
    """y[rows of block b] = x[rows of block b] @ w[block_expert[b]]^T; x (T_pad, K), w (E, N, K)
    bf16, contiguous along K; block_expert (T_pad / block_m,) int32; y (T_pad, N), preallocated.
    Padding blocks are not written."""
    t_pad, k = x.shape
    experts, n, k2 = w.shape
    num_blocks = block_expert.shape[0]
    assert k == k2 and tuple(y.shape) == (t_pad, n) and num_blocks * block_m == t_pad, \
        (x.shape, w.shape, block_expert.shape, y.shape, block_m)
    assert x.stride(1) == 1 and w.stride(2) == 1 and y.stride(1) == 1
    grid = lambda meta: (num_blocks * triton.cdiv(n, meta["BLOCK_N"]),)  # noqa: E731
    _moe_kernel[grid](x, w, block_expert, y, n, k, experts, num_blocks,
                      x.stride(0), w.stride(0), w.stride(1), y.stride(0), BLOCK_M=block_m)
    return y


def best_config(experts, topk, tokens, n, k, block_m, padding_blocks=0):
    """The config the autotuner picked for a case (after a first call), as text."""
    from bench_gpu import moe_layout
    num_blocks = len(moe_layout((experts, topk, tokens, n, k, block_m, padding_blocks)).block_expert)
    for key, cfg in getattr(_moe_kernel, "cache", {}).items():
        if tuple(key[:3]) == (n, k, num_blocks):
            return f"BLOCK_M={block_m} {cfg.kwargs} stages={cfg.num_stages} warps={cfg.num_warps}"
    return None


if __name__ == "__main__":
    gen = torch.Generator(device="cuda").manual_seed(0)
    bm, experts, n, k = 64, 4, 1003, 520
    block_expert = torch.tensor([0, 0, 2, 3, -1], device="cuda", dtype=torch.int32)
    x = torch.randn(block_expert.numel() * bm, k, device="cuda", dtype=torch.bfloat16, generator=gen)
    w = torch.randn(experts, n, k, device="cuda", dtype=torch.bfloat16, generator=gen)
    y = torch.full((x.shape[0], n), float("nan"), device="cuda", dtype=torch.bfloat16)
    moe_gemm(x, w, block_expert, y, bm)
    rows = [b for b in range(block_expert.numel()) if block_expert[b] >= 0]
    for b in rows:
        e = int(block_expert[b])
        ref = x[b * bm:(b + 1) * bm].double() @ w[e].double().t()
        got = y[b * bm:(b + 1) * bm].double()
        print("block", b, "expert", e, "rel. error", float((got - ref).norm() / ref.norm()))
    print(best_config(experts, 0, 0, n, k, bm))

"""The Triton peers of the Argus bf16 row kernels, written as Triton's tutorials
write them: one program per row, the row in one block of BLOCK_SIZE =
next_power_of_2(N) columns, masked loads and stores.

  - softmax: tutorial 02 (fused softmax) in its one-program-per-row form; the row
    is upcast to float32 after the load (`.to(tl.float32)`), as Argus computes it;
  - layernorm: tutorial 05's forward kernel (_layer_norm_fwd_fused) with its column
    loops (one iteration here, since BLOCK_SIZE >= N) and float32 statistics, without
    the Mean / Rstd outputs that only the backward pass reads (torch's layer_norm and
    the Argus kernel do not write them either);
  - rmsnorm: the same kernel without the mean and the bias: y = x * rsqrt(mean(x^2) + eps) * w.

num_warps is autotuned over 4, 8 and 16 (the tutorials pick 8 or 16 for rows of
4096 and more; the best of the three is at least as fast). Imported only on the GPU
machine.
"""

import torch
import triton
import triton.language as tl

WARPS = [triton.Config({}, num_warps=w) for w in (4, 8, 16)]


@triton.autotune(configs=WARPS, key=["n_cols", "BLOCK_SIZE"])
@triton.jit
def _softmax_kernel(output_ptr, input_ptr, input_row_stride, output_row_stride, n_cols, BLOCK_SIZE: tl.constexpr):
    row_idx = tl.program_id(0)
    row_start_ptr = input_ptr + row_idx * input_row_stride
    col_offsets = tl.arange(0, BLOCK_SIZE)
    input_ptrs = row_start_ptr + col_offsets
    mask = col_offsets < n_cols
    row = tl.load(input_ptrs, mask=mask, other=-float("inf")).to(tl.float32)
    row_minus_max = row - tl.max(row, axis=0)
    numerator = tl.exp(row_minus_max)
    denominator = tl.sum(numerator, axis=0)
    softmax_output = numerator / denominator
    output_row_start_ptr = output_ptr + row_idx * output_row_stride
    tl.store(output_row_start_ptr + col_offsets, softmax_output.to(output_ptr.dtype.element_ty), mask=mask)


@triton.autotune(configs=WARPS, key=["N", "BLOCK_SIZE"])
@triton.jit
def _layer_norm_fwd_fused(X, Y, W, B, stride, N, eps, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    Y += row * stride
    X += row * stride
    # Compute mean
    _mean = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        a = tl.load(X + cols, mask=cols < N, other=0.).to(tl.float32)
        _mean += a
    mean = tl.sum(_mean, axis=0) / N
    # Compute variance
    _var = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        x = tl.load(X + cols, mask=cols < N, other=0.).to(tl.float32)
        x = tl.where(cols < N, x - mean, 0.)
        _var += x * x
    var = tl.sum(_var, axis=0) / N
    rstd = 1 / tl.sqrt(var + eps)
    # Normalize and apply linear transformation
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        mask = cols < N
        w = tl.load(W + cols, mask=mask)
        b = tl.load(B + cols, mask=mask)
        x = tl.load(X + cols, mask=mask, other=0.).to(tl.float32)
        x_hat = (x - mean) * rstd
        y = x_hat * w + b
        tl.store(Y + cols, y, mask=mask)


@triton.autotune(configs=WARPS, key=["N", "BLOCK_SIZE"])
@triton.jit
def _rms_norm_fwd_fused(X, Y, W, stride, N, eps, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    Y += row * stride
    X += row * stride
    _sq = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        a = tl.load(X + cols, mask=cols < N, other=0.).to(tl.float32)
        _sq += a * a
    rstd = 1 / tl.sqrt(tl.sum(_sq, axis=0) / N + eps)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        mask = cols < N
        w = tl.load(W + cols, mask=mask)
        x = tl.load(X + cols, mask=mask, other=0.).to(tl.float32)
        tl.store(Y + cols, x * rstd * w, mask=mask)


def _block(n):
    return triton.next_power_of_2(n)


def softmax(x, out):
    m, n = x.shape
    _softmax_kernel[(m,)](out, x, x.stride(0), out.stride(0), n, BLOCK_SIZE=_block(n))
    return out


def layernorm(x, w, b, out, eps):
    m, n = x.shape
    _layer_norm_fwd_fused[(m,)](x, out, w, b, x.stride(0), n, eps, BLOCK_SIZE=_block(n))
    return out


def rmsnorm(x, w, out, eps):
    m, n = x.shape
    _rms_norm_fwd_fused[(m,)](x, out, w, x.stride(0), n, eps, BLOCK_SIZE=_block(n))
    return out


def best_config(workload, n):
    kernel = {"softmax": _softmax_kernel, "layernorm": _layer_norm_fwd_fused, "rmsnorm": _rms_norm_fwd_fused}[workload]
    for key, cfg in kernel.cache.items():
        if n in key and _block(n) in key:
            return f"BLOCK_SIZE={_block(n)}, num_warps={cfg.num_warps}"
    return None


__all__ = ["softmax", "layernorm", "rmsnorm", "best_config", "torch"]

#!/usr/bin/env bash
# Compiles, on this machine, every PTX the GPU benchmarks need into DIR (default
# build-gpu/ptx, git-ignored), so that a GPU machine without a compiler can run
#   python3 bench/gpu_check.py --ptx-dir DIR
#   python3 bench/bench_gpu.py --ptx-dir DIR --out-dir OUT
# usage: bash bench/build_gpu_ptx.sh [DIR] [ARGUSC]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="${1:-$root/build-gpu/ptx}"
argusc="${2:-$root/build/argusc}"
mkdir -p "$out"
# Kernels that use Hopper's arch-specific instructions (wgmma, TMA, mbarriers) say so
# in a line '# arch: sm_90a' (argusc rejects them for plain sm_90); the rest are sm_90.
for src in "$root"/examples/*.ag; do
  name="$(basename "$src" .ag)"
  arch=$(sed -n 's/^# arch: //p' "$src" | head -n1)
  "$argusc" --arch="${arch:-sm_90}" "$src" -o "$out/$name.ptx"
done
# The attention cases bench_gpu.py runs besides the default (D128, non-causal).
"$argusc" --arch=sm_90 "$root/examples/attention.ag" -D CAUSAL=1 -o "$out/attention_causal.ptx"
"$argusc" --arch=sm_90 "$root/examples/attention.ag" -D D=64 -D SWZ=3 -D BM=64 -D WM=4 -o "$out/attention_d64.ptx"
"$argusc" --arch=sm_90 "$root/examples/attention.ag" -D D=64 -D SWZ=3 -D BM=64 -D WM=4 -D CAUSAL=1 \
  -o "$out/attention_d64_causal.ptx"
"$argusc" --arch=sm_90a "$root/examples/attention_wgmma.ag" -D CAUSAL=1 -o "$out/attention_wgmma_causal.ptx"
"$argusc" --arch=sm_90a "$root/examples/attention_wgmma_d64.ag" -D CAUSAL=1 -o "$out/attention_wgmma_d64_causal.ptx"
# The MoE grouped GEMM for prefill-like cases (layouts padded to BM = 128): two warpgroups.
"$argusc" --arch=sm_90a "$root/examples/moe_gemm.ag" -D BM=128 -D BN=256 -D WG=2 -o "$out/moe_gemm_bm128.ptx"
# The bf16 row kernels (bench_gpu.py softmax / layernorm / rmsnorm): rows of up to 4096 and
# 8192 elements, 4, 8 and 16 warps (the bench times each build that holds a case's rows).
for k in softmax_bf16 layernorm_bf16 rmsnorm_bf16; do
  for block in 4096 8192; do
    for w in 4 8 16; do
      "$argusc" --arch=sm_90 "$root/examples/$k.ag" -D BLOCK=$block -D W=$w -o "$out/${k}_b${block}_w${w}.ptx"
    done
  done
done
echo "PTX for $(ls "$out"/*.ptx | wc -l) kernels in $out"

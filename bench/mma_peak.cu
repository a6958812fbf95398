// Peak mma.sync m16n8k16 bf16->f32 throughput: independent accumulators, no memory
// traffic, for several warps per block and blocks per SM. The ceiling of the
// sm_80-style path (bench/results/gemm_tc_profile.md). On a GPU machine:
//   nvcc -O3 -arch=sm_90a -o /tmp/mma_peak bench/mma_peak.cu && /tmp/mma_peak
#include <cstdio>
#include <cuda_runtime.h>
template <int NACC>
__global__ void peak(float* out, int iters) {
  unsigned a0 = threadIdx.x, a1 = a0 * 3, a2 = a0 * 5, a3 = a0 * 7, b0 = a0 * 11, b1 = a0 * 13;
  float acc[NACC][4] = {};
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int j = 0; j < NACC; ++j)
      asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                   : "+f"(acc[j][0]), "+f"(acc[j][1]), "+f"(acc[j][2]), "+f"(acc[j][3])
                   : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
  }
  float s = 0;
  for (int j = 0; j < NACC; ++j) s += acc[j][0] + acc[j][1] + acc[j][2] + acc[j][3];
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
template <int NACC> void run(int warps, int blocksPerSm) {
  int blocks = 132 * blocksPerSm, threads = warps * 32, iters = 4096;
  float* out; cudaMalloc(&out, blocks * threads * 4);
  cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
  peak<NACC><<<blocks, threads>>>(out, iters);
  cudaEventRecord(e0);
  for (int r = 0; r < 5; ++r) peak<NACC><<<blocks, threads>>>(out, iters);
  cudaEventRecord(e1); cudaEventSynchronize(e1);
  float ms; cudaEventElapsedTime(&ms, e0, e1); ms /= 5;
  double flops = 2.0 * 16 * 8 * 16 * NACC * (double)iters * blocks * warps;
  printf("mma.sync peak: acc=%d warps/block=%d blocks/SM=%d  %.1f TFLOP/s  (err %s)\n", NACC, warps, blocksPerSm,
         flops / ms / 1e9, cudaGetErrorString(cudaGetLastError()));
  cudaFree(out);
}
int main() {
  run<32>(4, 1); run<32>(4, 2); run<16>(4,1); run<16>(4, 2); run<16>(4, 3); run<16>(4, 4); run<32>(8, 1); run<8>(4, 4);
}

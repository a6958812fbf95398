#!/usr/bin/env bash
# ctest: bench/bench_gpu.py --dry-run validates its arguments and the Argus kernels'
# metadata without a GPU (torch is not imported). Compiles the benchmarked examples
# that exist, expects exit 0 on them, exit 1 on a malformed metadata file and exit 2
# on a missing --ptx-dir; then the unit tests of the bindings and the report
# (bench/test_bench_gpu.py).   usage: bench_gpu_dry_run_test.sh ARGUSC PYTHON SCRATCH
set -u
argusc=$1 python=$2 scratch=$3
root="$(cd "$(dirname "$0")/.." && pwd)"
rm -rf "$scratch" && mkdir -p "$scratch/ptx" "$scratch/bad" "$scratch/out"
fail=0
for name_arch in gemm_tc:sm_90 gemm_wgmma:sm_90a gemm_bias_gelu:sm_90a moe_gemm:sm_90a attention:sm_90; do
  name=${name_arch%%:*} arch=${name_arch#*:}
  src="$root/examples/$name.ag"
  [ -f "$src" ] || continue
  "$argusc" --emit=ptx --arch=$arch "$src" -o "$scratch/ptx/$name.ptx" || { echo "argusc failed on $src"; fail=1; }
done
# gemm_wgmma is the gemm_nt workload's kernel; the dry run must bind it as C = A @ W^T
# and call K = 300 n/a (TMA rows of 16 bytes) instead of failing on it.
if [ -f "$scratch/ptx/gemm_wgmma.ptx" ]; then
  out=$("$python" "$root/bench/bench_gpu.py" --ptx-dir "$scratch/ptx" --out-dir "$scratch/out" --dry-run --only gemm_nt)
  rc=$?; [ $rc -eq 0 ] || { echo "gemm_nt dry run exited $rc, expected 0: $out"; fail=1; }
  echo "$out" | grep -q "W=W(N, K)" || { echo "gemm_wgmma not bound as A @ W^T in: $out"; fail=1; }
  echo "$out" | grep -q "M=129 N=257 K=300: n/a" || { echo "no K=300 n/a row in: $out"; fail=1; }
fi
# gemm_bias_gelu is the gemm_epilogue workload's kernel: the dry run must find its bias (N,)
# in argusc's metadata and call N = 1003 n/a (TMA rows of 16 bytes), and only that size.
if [ -f "$scratch/ptx/gemm_bias_gelu.ptx" ]; then
  out=$("$python" "$root/bench/bench_gpu.py" --ptx-dir "$scratch/ptx" --out-dir "$scratch/out" --dry-run --only gemm_epilogue)
  rc=$?; [ $rc -eq 0 ] || { echo "gemm_epilogue dry run exited $rc, expected 0: $out"; fail=1; }
  echo "$out" | grep -q "B=B(K, N) bias=bias(N) C=C(M, N)" || { echo "gemm_bias_gelu's bias not bound in: $out"; fail=1; }
  echo "$out" | grep -q "M=1000 N=1003 K=520: n/a" || { echo "no N=1003 n/a row in: $out"; fail=1; }
  if echo "$out" | grep -v "N=1003" | grep -q ": n/a"; then echo "an unexpected n/a gemm_epilogue case in: $out"; fail=1; fi
fi
# moe_gemm (BM=64) and its two-warpgroup build (BM=128) are the moe workload's kernels: each
# case binds to the build of its padding; K = 300 is n/a (TMA) on both.
if [ -f "$scratch/ptx/moe_gemm.ptx" ]; then
  "$argusc" --emit=ptx --arch=sm_90a "$root/examples/moe_gemm.ag" -D BM=128 -D BN=256 -D WG=2 \
    -o "$scratch/ptx/moe_gemm_bm128.ptx" || { echo "argusc failed on moe_gemm.ag -D BM=128"; fail=1; }
  out=$("$python" "$root/bench/bench_gpu.py" --ptx-dir "$scratch/ptx" --out-dir "$scratch/out" --dry-run --only moe)
  rc=$?; [ $rc -eq 0 ] || { echo "moe dry run exited $rc, expected 0: $out"; fail=1; }
  echo "$out" | grep -q "moe_gemm.ptx: built: .*W=W(E, N, K).*BM=64" || { echo "moe_gemm not bound in: $out"; fail=1; }
  echo "$out" | grep -q "moe_gemm_bm128.ptx: built: .*BM=128" || { echo "moe_gemm_bm128 not bound in: $out"; fail=1; }
  echo "$out" | grep -q "K=300 BM=64: n/a" || { echo "no K=300 n/a row in: $out"; fail=1; }
  if echo "$out" | grep -v "K=300" | grep -q ": n/a"; then echo "an unexpected n/a moe case in: $out"; fail=1; fi
fi
"$python" "$root/bench/bench_gpu.py" --ptx-dir "$scratch/ptx" --out-dir "$scratch/out" --dry-run
rc=$?; [ $rc -eq 0 ] || { echo "dry run on the compiled examples exited $rc, expected 0"; fail=1; }
"$python" "$root/bench/bench_gpu.py" --ptx-dir "$scratch/ptx" --out-dir "$scratch/out" --dry-run --quick >/dev/null
rc=$?; [ $rc -eq 0 ] || { echo "quick dry run exited $rc, expected 0"; fail=1; }
echo '// not PTX' > "$scratch/bad/gemm_tc.ptx"
echo '{"version": 1, "kernels": [' > "$scratch/bad/gemm_tc.meta.json"
out=$("$python" "$root/bench/bench_gpu.py" --ptx-dir "$scratch/bad" --out-dir "$scratch/out" --dry-run 2>&1)
rc=$?; [ $rc -eq 1 ] || { echo "dry run on malformed metadata exited $rc, expected 1"; fail=1; }
echo "$out" | grep -q "not valid JSON" || { echo "no 'not valid JSON' in: $out"; fail=1; }
"$python" "$root/bench/bench_gpu.py" --ptx-dir "$scratch/nonexistent" --out-dir "$scratch/out" --dry-run 2>/dev/null
rc=$?; [ $rc -eq 2 ] || { echo "dry run with a missing --ptx-dir exited $rc, expected 2"; fail=1; }
"$python" -m unittest discover -s "$root/bench" -p 'test_bench_gpu.py' || { echo "bench/test_bench_gpu.py failed"; fail=1; }
exit $fail

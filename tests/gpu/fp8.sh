#!/bin/bash
# tests/gpu/fp8.sh: one device call that checks fp8 GEMM on sm_90a's wgmma
# (m64nNk32, docs/cuda.md "fp8 on wgmma"):
#     OUT=dir bash tests/gpu/fp8.sh
# verify   examples/gemm_fp8.py with --verify on cuda (against the cpu backend): TMA-fed and
#          warp-specialized, cp.async-fed (block_K 32/64: 32- and 64-byte swizzle), several
#          128-byte atoms per row (block_K 256), partial tiles, K not a multiple of 16, e5m2 and
#          mixed e4m3 x e5m2, 1 and 2 warpgroups, 1..4 stages, float32 out; and the mma.sync
#          fallback (B as (K, N))
# sass     the QGMMA/HGMMA/HMMA counts of the benchmark's cubin
# memcheck compute-sanitizer memcheck on a partial-tile TMA case, where it runs
# bench    build/bench/bench_cuda "gemm float8" (cuBLASLt fp8 in the same process)
# Writes build.log, verify.log, sass.log, sanitizer.log, bench.log to $OUT; under 4 minutes.
. tests/gpu/setup.sh
echo "build: ok"
G=examples/gemm_fp8.py
v() { verify "$@"; }
BENCH="block_M=128 block_N=256 block_K=128 threads=256 num_stages=4"
{
v $G
v $G M=136 N=200 K=96 block_K=32 b_dtype=float8_e5m2
v $G M=1024 N=1024 K=2048 $BENCH
v $G M=1000 N=776 K=1024 $BENCH
v $G M=300 N=520 K=640 $BENCH
v $G M=512 N=512 K=1024 a_dtype=float8_e5m2 b_dtype=float8_e5m2
v $G M=512 N=384 K=512 a_dtype=float8_e5m2
v $G M=200 N=136 K=1000 block_K=256
v $G M=256 N=256 K=1024 block_K=256
v $G M=256 N=256 K=512 block_K=64
v $G M=200 N=136 K=96 block_K=32
v $G M=384 N=256 K=512 threads=256
v $G M=192 N=512 K=512 block_M=64 block_N=256
v $G num_stages=1
v $G num_stages=2
v $G out_dtype=float32
v examples/gemm.py M=256 N=256 K=256 dtype=float8_e4m3fn
echo "verify: $pass passed, $fail failed"
} > "$OUT/verify.log" 2>&1
tail -1 "$OUT/verify.log"; grep FAIL -A8 "$OUT/verify.log" | head -30

# the benchmark's kernel: QGMMA only (no HMMA fallback), and which loads
. tests/e2e/find_cuobjdump
if cuobj=$(find_cuobjdump); then
  args=""; for d in M=8192 N=8192 K=8192 $BENCH; do args="$args -D $d"; done
  timeout 60 "$T" compile $G --target cuda,arch=sm_90a $args -o "$OUT/gemm_fp8_8192.cubin" >/dev/null 2>&1
  "$cuobj" -sass "$OUT/gemm_fp8_8192.cubin" > "$OUT/sass.log" 2>&1
  echo "sass: $(grep -c QGMMA "$OUT/sass.log") QGMMA, $(grep -c HGMMA "$OUT/sass.log") HGMMA, $(grep -c HMMA "$OUT/sass.log") HMMA, $(grep -c UTMALDG "$OUT/sass.log") UTMALDG, $(grep -c -e STL -e LDL "$OUT/sass.log") STL/LDL"
fi

CS=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null)
if [ -n "$CS" ]; then
  timeout 60 "$CS" --tool memcheck --error-exitcode 9 "$T" run $G -D M=200 -D N=136 -D K=1024 --target cuda > "$OUT/sanitizer.log" 2>&1
  echo "memcheck gemm_fp8 M=200 N=136 K=1024: exit $?"
fi

timeout 100 build/bench/bench_cuda "gemm float8" 2>&1 | tee "$OUT/bench.log" | grep -E "^gemm|tilec|cuBLASLt|ratio|failed|not found"
# other block shapes at 8192^3: 128 x 128 tiles over 2 consumer warpgroups with 6 stages (the
# same 192 KB of shared memory), and over 1 with 3 stages, two blocks an SM (docs/cuda.md)
for cfg in "f8.block_N=128 f8.num_stages=6" "f8.block_N=128 f8.threads=128 f8.num_stages=3"; do
  echo "$cfg:"
  # shellcheck disable=SC2086
  timeout 60 build/bench/bench_cuda "gemm float8_e4m3fn 8192" $cfg 2>&1 | tee -a "$OUT/bench.log" | grep -E "tilec|ratio|failed"
done

#!/bin/sh
# tests/gpu/tail.sh: how much the GEMM's last, partial wave of tiles costs on the device (one call).
# Times the 128x256x64 f16 GEMM at M = 3968, 4096 and 4224 (N = K = 4096: 496, 512 and 528 tiles,
# i.e. 3.76, 3.88 and exactly 4 waves of 132 SMs) and 2048^3 beside cuBLAS, and records which
# kernel cuBLAS picks at 2048^3 and 4096^3 (ncu launch statistics). Output under $OUT.
. tests/gpu/setup.sh
G="block_M=128 block_N=256 block_K=64 threads=256 num_stages=4"
D=""; for kv in $G; do D="$D -D $kv"; done
{
  for i in 1 2; do
    # shellcheck disable=SC2086
    build/bench/bench_cuda "gemm float16" $G
    # shellcheck disable=SC2086
    build/bench/bench_cuda "gemm float16 2048^3" $G
    for M in 3968 4096 4224; do
      echo "== M=$M N=4096 K=4096"
      # shellcheck disable=SC2086
      $T run examples/gemm.py --target cuda --bench -D M=$M -D N=4096 -D K=4096 $D 2>&1 | grep -i "bench\|error"
    done
  done
} 2>&1 | tee "$OUT/tail.log"
if command -v ncu >/dev/null; then
  # shellcheck disable=SC2086
  timeout 240 ncu --section LaunchStats --launch-count 12 build/bench/bench_cuda "gemm float16 2048^3" $G >"$OUT/ncu2048.log" 2>&1
  grep -E "^  [A-Za-z_].*\(|Grid Size|Cluster Size|Block Size|Registers Per|Dynamic Shared" "$OUT/ncu2048.log" | head -60
fi

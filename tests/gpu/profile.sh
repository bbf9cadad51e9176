#!/bin/sh
# tests/gpu/profile.sh: hardware counters (ncu, clocks left alone) of the 128x256x64 f16 GEMM at
# 4096^3 with stream-K off and on, and of cuBLAS's kernel beside it: time, DRAM bytes read, L2 hit
# rate, SM throughput, grid, block, cluster and registers. Says why, where a kernel is slower than
# another with the same instructions (docs/performance.md). Then where tilec's warps wait: the
# per-instruction warp-state samples of the same kernel (ncu's source page, $OUT/stalls.csv),
# summed by bench/ncu_stalls.py by how often each instruction runs (the k loop, the barrier
# waits, the tile boundary). Output under $OUT.
. tests/gpu/setup.sh
G="block_M=128 block_N=256 block_K=64 threads=256 num_stages=4"
M="gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,sm__throughput.avg.pct_of_peak_sustained_elapsed,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_elapsed,launch__grid_size,launch__block_size,launch__registers_per_thread,launch__cluster_dim_x,launch__cluster_dim_y"
if ! command -v ncu >/dev/null; then echo "no ncu here"; exit 0; fi
{
  for t in cuda cuda,streamk=on; do
    echo "== tilec target=$t, 4096^3 (the 4th launch)"
    # shellcheck disable=SC2086
    timeout 200 ncu --clock-control none -k regex:tilec_ --launch-skip 3 --launch-count 1 --metrics "$M" \
      build/bench/bench_cuda "gemm float16" target=$t $G 2>&1 | grep -E "tilec_|cuda|gpu__|dram__|lts__|sm__|launch__|TFLOP|ERR"
  done
  echo "== cuBLAS, 4096^3 and 8192^3 (its 4th to 6th launches)"
  timeout 200 ncu --clock-control none -k regex:'^(?!tilec_)(?!.*[Mm]emset)' --launch-skip 3 --launch-count 3 --metrics "$M" \
    build/bench/bench_cuda "gemm float16" $G 2>&1 | grep -E "^  [A-Za-z_].*\(|gpu__|dram__|lts__|sm__|launch__|TFLOP|ERR"
  echo "== where tilec's warps wait, 4096^3 (warp-state samples per instruction)"
  # shellcheck disable=SC2086
  timeout 200 ncu --clock-control none -k regex:tilec_ --launch-skip 3 --launch-count 1 --section WarpStateStats \
    --section SourceCounters -f -o "$OUT/stalls" build/bench/bench_cuda "gemm float16 4096" $G >"$OUT/stalls.log" 2>&1 &&
    ncu -i "$OUT/stalls.ncu-rep" --page source --csv --print-source sass >"$OUT/stalls.csv" 2>&1 &&
    python3 bench/ncu_stalls.py "$OUT/stalls.csv" --top 15 || { echo "FAILED: the warp-state samples"; tail -5 "$OUT/stalls.log"; }
  rm -f "$OUT/stalls.ncu-rep"
} 2>&1 | tee "$OUT/profile.log"

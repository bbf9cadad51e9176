#!/bin/sh
# tests/gpu/walk.sh: the persistent walk (docs/cuda.md, "Persistent blocks") on the device, in one
# call: warp-specialized GEMMs whose consumer warpgroups run free between tiles (no barrier at a
# tile's start, after its loop or at its end: --explain's "consumers:" line) verify with several
# tiles a block (f16, bf16, fp8, partial tiles, 128 x 128 tiles, stream-K on), under
# compute-sanitizer memcheck, racecheck and synccheck too; then f16/bf16 GEMM at 2048^3, 4096^3 and
# 8192^3 beside cuBLAS, twice, and ncu's DRAM bytes at 4096^3 (the wave panels). Output under $OUT.
. tests/gpu/setup.sh
G="block_M=128 block_N=256 block_K=64 threads=256 num_stages=4"
D=""; for kv in $G; do D="$D -D $kv"; done
{
  # shellcheck disable=SC2086
  {
  verify examples/gemm.py M=4096 N=4096 K=4096 $G
  verify examples/gemm.py M=2000 N=4600 K=1000 $G
  verify examples/gemm.py M=4096 N=4096 K=4096 $G dtype=bfloat16
  verify examples/gemm.py M=8192 N=8192 K=512 $G
  verify examples/gemm.py M=4224 N=4096 K=512 block_M=128 block_N=128 block_K=64 threads=128 num_stages=4
  verify examples/gemm_fp8.py M=4096 N=4096 K=4096 block_M=128 block_N=256 block_K=128 threads=256 num_stages=4
  verify examples/gemm_fp8.py M=2000 N=4000 K=1024 out_dtype=float32 block_M=128 block_N=256 block_K=128 threads=256 num_stages=3
  }
  for n in 1 2 3; do
    # shellcheck disable=SC2086
    out=$(timeout 120 "$T" run examples/gemm.py --target cuda,streamk=on --verify -D M=4096 -D N=4096 -D K=2048 $D 2>&1)
    if echo "$out" | grep -q "verify .*: ok"; then pass=$((pass+1)); echo "PASS walk streamk=on run $n"; else fail=$((fail+1)); echo "FAIL walk streamk=on run $n"; echo "$out" | tail -4; fi
  done
  # shellcheck disable=SC2086
  if "$T" source examples/gemm.py --target cuda --explain --kernel-only $D | grep -q "^// consumers: no barrier"; then pass=$((pass+1)); echo "PASS walk: the consumers run free"; else fail=$((fail+1)); echo "FAIL walk: the consumers meet"; fi
  if command -v compute-sanitizer >/dev/null; then
    for tool in memcheck racecheck synccheck; do
      # shellcheck disable=SC2086
      out=$(timeout 150 compute-sanitizer --tool $tool "$T" run examples/gemm.py --target cuda --verify -D M=2048 -D N=2560 -D K=384 $D 2>&1)
      echo "$out" | grep -E "ERROR SUMMARY|RACECHECK SUMMARY|verify" | head -3
      if echo "$out" | grep -q "verify .*: ok" && echo "$out" | grep -qE "(ERROR|RACECHECK) SUMMARY: 0"; then pass=$((pass+1)); echo "PASS walk $tool"; else fail=$((fail+1)); echo "FAIL walk $tool"; fi
    done
  fi
  echo "walk checks: $pass passed, $fail failed"
  for i in 1 2; do
    # shellcheck disable=SC2086
    build/bench/bench_cuda "gemm float16 2048" $G; build/bench/bench_cuda "gemm float16 4096" $G; build/bench/bench_cuda "gemm float16 8192" $G
    # shellcheck disable=SC2086
    build/bench/bench_cuda "gemm bfloat16 2048" $G; build/bench/bench_cuda "gemm bfloat16 4096" $G; build/bench/bench_cuda "gemm bfloat16 8192" $G
  done
  if command -v ncu >/dev/null; then
    # shellcheck disable=SC2086
    timeout 120 ncu --clock-control none -k regex:tilec_ --launch-skip 3 --launch-count 1 --metrics gpu__time_duration.sum,dram__bytes_read.sum \
      build/bench/bench_cuda "gemm float16 4096" $G 2>&1 | grep -E "gpu__|dram__"
  fi
} 2>&1 | tee "$OUT/walk.log"

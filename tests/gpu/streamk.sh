#!/bin/sh
# tests/gpu/streamk.sh: stream-K (cuda target option streamk=on; docs/cuda.md "Stream-K") on the
# device, in one call: GEMM lines whose tiles leave the last wave partly idle verify (f16, bf16,
# fp8, partial tiles, 2 blocks an SM, fewer tiles than SMs), again after many launches on one workspace (--bench
# --verify), compute-sanitizer memcheck and racecheck; then f16/bf16 GEMM at 4096^3 and 8192^3
# and 128 x 8192 x 8192 with streamk off and on, each beside cuBLAS, twice; launches alternating on two streams give
# bitwise the result of one launch alone (tests/helpers/streamk_streams.c). Output under $OUT.
. tests/gpu/setup.sh
SK=cuda,streamk=on
vsk() { f=$1; shift; args=""; for d in "$@"; do case $d in *=*) args="$args -D $d" ;; *) args="$args $d" ;; esac; done
  # shellcheck disable=SC2086
  out=$(timeout 120 "$T" run "$f" --target "$SK" --verify $args 2>&1); rc=$?
  if [ $rc -eq 0 ] && echo "$out" | grep -q "verify .*: ok"; then pass=$((pass+1)); echo "PASS streamk $f $*"
  else fail=$((fail+1)); echo "FAIL($rc) streamk $f $*"; echo "$out" | tail -n 6; fi; }
G="block_M=128 block_N=256 block_K=64 threads=256 num_stages=4"
{
  # shellcheck disable=SC2086
  {
  vsk examples/gemm.py M=4096 N=4096 K=4096 $G
  vsk examples/gemm.py M=2048 N=4608 K=512 $G
  vsk examples/gemm.py M=2000 N=4600 K=1000 $G
  vsk examples/gemm.py M=4096 N=4096 K=4096 $G dtype=bfloat16
  vsk examples/gemm.py M=8192 N=8192 K=1024 $G
  vsk examples/gemm.py M=128 N=8192 K=8192 $G
  vsk examples/gemm.py M=256 N=1024 K=8192 $G
  vsk examples/gemm.py M=4224 N=4096 K=512 block_M=128 block_N=128 block_K=64 threads=128 num_stages=4
  vsk examples/gemm_fp8.py M=4096 N=4096 K=4096
  vsk tests/e2e/data/streamk_gemm.py --kernel bias_gemm M=4096 N=4096 K=2048
  vsk tests/e2e/data/streamk_gemm.py --kernel seeded_gemm M=4096 N=4096 K=2048
  }
  echo "== after 2 warm-up and >= 5 timed launches on one workspace, one more run verified"
  # shellcheck disable=SC2086
  out=$(timeout 120 "$T" run examples/gemm.py --target "$SK" --bench --verify -D M=4096 -D N=4096 -D K=4096 $(for kv in $G; do printf -- '-D %s ' "$kv"; done) 2>&1)
  echo "$out" | tail -3
  if echo "$out" | grep -q "verify .*: ok"; then pass=$((pass+1)); echo "PASS streamk bench+verify"; else fail=$((fail+1)); echo "FAIL streamk bench+verify"; fi
  out=$(timeout 120 build/tests/helpers/streamk_streams 2>&1)
  echo "$out" | tail -3
  case "$out" in *"PASS streamk streams"*) pass=$((pass+1)) ;; *) fail=$((fail+1)) ;; esac
  echo "streamk checks: $pass passed, $fail failed"
  for i in 1 2; do
    for t in cuda $SK; do
      echo "== target=$t round $i"
      # shellcheck disable=SC2086
      build/bench/bench_cuda "gemm float16" target=$t $G
      # shellcheck disable=SC2086
      build/bench/bench_cuda "gemm bfloat16" target=$t $G
      # shellcheck disable=SC2086
      build/bench/bench_cuda "gemm float16 128x" target=$t $G
    done
  done
  if command -v compute-sanitizer >/dev/null; then
    for tool in memcheck racecheck synccheck; do
      out=$(timeout 150 compute-sanitizer --tool $tool "$T" run examples/gemm.py --target "$SK" --verify -D M=2048 -D N=2560 -D K=384 $(for kv in $G; do printf -- '-D %s ' "$kv"; done) 2>&1)
      echo "$out" | grep -E "ERROR SUMMARY|RACECHECK SUMMARY|verify" | head -3
      if echo "$out" | grep -q "verify .*: ok" && echo "$out" | grep -qE "(ERROR|RACECHECK) SUMMARY: 0"; then pass=$((pass+1)); echo "PASS streamk $tool"; else fail=$((fail+1)); echo "FAIL streamk $tool"; fi
    done
  fi
  echo "streamk checks with the sanitizers: $pass passed, $fail failed"
} 2>&1 | tee "$OUT/streamk.log"

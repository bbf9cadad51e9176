#!/bin/bash
# tests/gpu/turns.sh: one device call that checks branch turns-issue before it merges:
#     OUT=dir bash tests/gpu/turns.sh
# attention with the consumer warpgroups' turns passed at the first gemm's issue (pingpong.c):
# --verify at both block_N, causal and not, one tile a block and several (a hang shows as a
# timeout, exit 124), then the timing beside the sixth round's 304 / 335 TFLOP/s (128x64 blocks).
set -u
mkdir -p "$OUT"
export TILEC_CACHE_DIR=$(mktemp -d)
. tests/gpu/dlpack.sh
timeout 200 make -j16 -s all build/bench/bench_cuda "$@" >"$OUT/build.log" 2>&1 || { echo "build FAILED"; tail -30 "$OUT/build.log"; exit 1; }
T=build/tilec
pass=0; fail=0
v() { args=""; for d in "$@"; do args="$args -D $d"; done
  out=$(timeout 60 "$T" run examples/flash_attention.py --target cuda --verify $args 2>&1); rc=$?
  if [ $rc -eq 0 ]; then pass=$((pass+1)); echo "PASS $*"; else fail=$((fail+1)); echo "FAIL($rc) $*"; echo "$out" | tail -n 4; fi; }
{
for bn in 64 128; do for c in True False; do
  v batch=1 heads=4 seq_len=1024 dim=128 block_M=128 threads=256 num_stages=2 block_N=$bn is_causal=$c
  v batch=2 heads=8 seq_len=2048 dim=128 block_M=128 threads=256 num_stages=3 block_N=$bn is_causal=$c
done; done
v batch=1 heads=2 seq_len=1000 dim=64 block_M=128 threads=256 num_stages=2 block_N=64 is_causal=False
v batch=1 heads=2 seq_len=512 dim=128 block_M=192 threads=384 num_stages=2 block_N=64 is_causal=True
echo "verify: $pass passed, $fail failed"
} >"$OUT/verify.log" 2>&1
tail -1 "$OUT/verify.log"; grep FAIL -A4 "$OUT/verify.log" | head -20
for bn in 64 128; do
  timeout 150 stdbuf -oL build/bench/bench_cuda causal fa.block_N=$bn 2>&1 | grep -E "^flash|tilec" | sed "s/^/block_N=$bn /"
done

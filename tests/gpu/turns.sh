#!/bin/bash
# tests/gpu/turns.sh: one device call that checks branch turns-issue before it merges:
#     OUT=dir bash tests/gpu/turns.sh
# - attention with the consumer warpgroups' turns passed at the first gemm's issue (pingpong.c):
#   --verify at both block_N, causal and not, one tile a block and several (a hang shows as a
#   timeout, exit 124);
# - gemms without fence.proxy.async where only TMA fills the operands: --verify of TMA, cp.async
#   and plain pipelines;
# - the timings: attention beside the seventh round's 314 / 339 TFLOP/s (128x64 blocks), the
#   128x256x64 GEMM beside the sixth round's 722 / 735 (f16 4096³ / 8192³).
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
  v batch=2 heads=8 seq_len=2048 dim=128 block_M=128 threads=256 num_stages=$((bn == 64 ? 3 : 2)) block_N=$bn is_causal=$c
done; done
v batch=1 heads=2 seq_len=1000 dim=64 block_M=128 threads=256 num_stages=2 block_N=64 is_causal=False
v batch=1 heads=2 seq_len=512 dim=128 block_M=192 threads=384 num_stages=2 block_N=64 is_causal=True
g() { args=""; for d in "$@"; do args="$args -D $d"; done
  out=$(timeout 120 "$T" run examples/gemm.py --target cuda --verify $args 2>&1); rc=$?
  if [ $rc -eq 0 ]; then pass=$((pass+1)); echo "PASS gemm $*"; else fail=$((fail+1)); echo "FAIL($rc) gemm $*"; echo "$out" | tail -n 4; fi; }
g M=1024 N=1024 K=1024 block_N=256 block_K=64 threads=256 num_stages=4
g M=1000 N=520 K=320 block_N=256 block_K=64 threads=256 num_stages=3 dtype=bfloat16
g M=512 N=512 K=512 block_N=128 block_K=64 threads=128 num_stages=3
g M=512 N=512 K=512
g M=256 N=256 K=256 num_stages=0
echo "verify: $pass passed, $fail failed"
} >"$OUT/verify.log" 2>&1
tail -1 "$OUT/verify.log"; grep FAIL -A4 "$OUT/verify.log" | head -20
for bn in 64 128; do
  timeout 150 stdbuf -oL build/bench/bench_cuda causal fa.block_N=$bn 2>&1 | grep -E "^flash|tilec" | sed "s/^/block_N=$bn /"
done
timeout 150 stdbuf -oL build/bench/bench_cuda "gemm float16" block_M=128 block_N=256 block_K=64 threads=256 num_stages=4 2>&1 |
  grep -E "^gemm|tilec|cuBLAS|ratio"

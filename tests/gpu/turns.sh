#!/bin/bash
# tests/gpu/turns.sh: one device call that checks the warpgroup turns and the TMA-fed fences:
#     OUT=dir bash tests/gpu/turns.sh
# - attention with the consumer warpgroups' turns passed at the first gemm's issue (pingpong.c):
#   --verify at both block_N, causal and not, one tile a block and several (a hang shows as a
#   timeout, exit 124);
# - gemms without fence.proxy.async where only TMA fills the operands: --verify of TMA, cp.async
#   and plain pipelines;
# - the timings: attention beside the seventh round's 314 / 339 TFLOP/s (128x64 blocks), the
#   128x256x64 GEMM beside the sixth round's 722 / 735 (f16 4096³ / 8192³).
. tests/gpu/setup.sh
v() { verify examples/flash_attention.py "$@"; }
g() { VERIFY_TIMEOUT=120 verify examples/gemm.py "$@"; }
{
for bn in 64 128; do for c in True False; do
  v batch=1 heads=4 seq_len=1024 dim=128 block_M=128 threads=256 num_stages=2 block_N=$bn is_causal=$c
  v batch=2 heads=8 seq_len=2048 dim=128 block_M=128 threads=256 num_stages=$((bn == 64 ? 3 : 2)) block_N=$bn is_causal=$c
done; done
v batch=1 heads=2 seq_len=1000 dim=64 block_M=128 threads=256 num_stages=2 block_N=64 is_causal=False
v batch=1 heads=2 seq_len=512 dim=128 block_M=192 threads=384 num_stages=2 block_N=64 is_causal=True
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

#!/bin/bash
# tests/gpu/epilogue.sh: one device call that checks the staged epilogue (partial and unaligned tiles):
#     OUT=dir bash tests/gpu/epilogue.sh
# partial, unaligned (N=135) and many-tile gemms with --verify, then the 128x256x64 benchmark.
. tests/gpu/setup.sh
v() { VERIFY_TIMEOUT=120 verify "$@"; }
G=examples/gemm.py
{
v $G M=4000 N=2000 K=200 threads=256 block_N=256 block_K=64 num_stages=3 dtype=bfloat16
v $G M=300 N=270 K=128 threads=256 block_N=256 block_K=64 num_stages=3
v $G M=200 N=135 K=96
v $G M=200 N=136 K=96 dtype=bfloat16
v $G M=4096 N=2048 K=256 threads=256 block_N=256 block_K=64 num_stages=4
v examples/gemm_transposed.py threads=256
v examples/splitk_gemm.py
v examples/eager_gemm.py M=256 N=256 K=256
v examples/eager_gemm.py M=100 N=72 K=40
echo "verify: $pass passed, $fail failed"
} > "$OUT/verify.log" 2>&1
tail -1 "$OUT/verify.log"; grep FAIL -A8 "$OUT/verify.log" | head -30
timeout 100 build/bench/bench_cuda gemm block_M=128 block_N=256 block_K=64 threads=256 num_stages=4 2>&1 | grep -E "^gemm|tilec|ratio"

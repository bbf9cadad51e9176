#!/bin/bash
# bench/gpu_sweep.sh: time the gemm and flash-attention examples on cuda at several block
# configurations (tilec run --bench: CUDA events, L2 flushed, median), to choose the ones
# bench_cuda and docs/performance.md report. Run from the repository root on a GPU machine,
# after `make`:  bash bench/gpu_sweep.sh   (about 3 minutes on an H200)
T=${TILEC:-build/tilec}
gemm() { # M block_M block_N block_K threads stages
  out=$(timeout 90 "$T" run examples/gemm.py --target cuda --bench -D M=$1 -D N=$1 -D K=$1 -D block_M=$2 -D block_N=$3 \
        -D block_K=$4 -D threads=$5 -D num_stages=$6 2>&1 | grep -E 'bench:|error' | head -n 2 | tr '\n' ' ')
  echo "gemm f16 $1^3 block ${2}x${3}x${4} threads $5 stages $6: $out"
}
fa() { # causal block_M block_N threads stages
  out=$(timeout 90 "$T" run examples/flash_attention.py --target cuda --bench -D batch=8 -D heads=16 -D seq_len=4096 -D dim=128 \
        -D is_causal=$1 -D block_M=$2 -D block_N=$3 -D threads=$4 -D num_stages=$5 2>&1 | grep -E 'bench:|error' | head -n 2 | tr '\n' ' ')
  echo "flash_attention causal=$1 block ${2}x${3} threads $4 stages $5: $out"
}
for cfg in "128 128 32 128 3" "128 128 64 128 3" "128 128 32 128 4" "128 256 32 256 3" "128 256 64 256 3" "256 128 32 256 3" "128 128 64 256 3"; do
  gemm 8192 $cfg
done
for cfg in "128 64 256 2" "128 128 256 2" "64 64 128 2" "128 64 128 2" "128 64 256 1"; do
  fa False $cfg
done
fa True 128 64 256 2

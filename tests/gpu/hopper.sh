#!/bin/bash
# tests/gpu/hopper.sh: the sm_90a (wgmma) paths on a Hopper GPU, in one device call:
#     OUT=/some/dir bash tests/gpu/hopper.sh [--no-build]
# verify   gemm and flash-attention configurations that take wgmma (every warp a 16-row slice
#          of the tile), both dtypes, every transposition, partial tiles; each --verify
# sass     HGMMA counts of those cubins
# bench    build/bench/bench_cuda gemm (cuBLAS in the same process) at wgmma block shapes, and
#          flash attention
# Writes summary.txt, verify.log, bench.log to $OUT.
set -u
OUT=${OUT:-$(mktemp -d /tmp/tilec-hopper-XXXXXX)}
mkdir -p "$OUT"
export TILEC_CACHE_DIR=$(mktemp -d /tmp/tilec-hopper-cache-XXXXXX)
T=build/tilec
SUMMARY="$OUT/summary.txt"
: >"$SUMMARY"
say() { echo "$*" | tee -a "$SUMMARY"; }
if [ "${1:-}" != "--no-build" ]; then
  . tests/gpu/dlpack.sh
  timeout 240 make -j16 -s all build/bench/bench_cuda "$@" >"$OUT/build.log" 2>&1 || { say "build: FAILED"; tail -n 30 "$OUT/build.log"; exit 1; }
  say "build: ok"
fi
pass=0; fail=0
v() { # file, then -D bindings
  f=$1; shift
  args=""
  for d in "$@"; do args="$args -D $d"; done
  # shellcheck disable=SC2086
  out=$(timeout 120 "$T" run "$f" --target cuda --verify $args 2>&1)
  rc=$?
  if [ $rc -eq 0 ]; then pass=$((pass + 1)); echo "PASS $f $*"; else fail=$((fail + 1)); echo "FAIL($rc) $f $*"; echo "$out" | tail -n 8; fi
  echo "$out" | grep -E 'max_abs|cosine' | head -n 2 | sed 's/^/    /'
} >>"$OUT/verify.log"
G=examples/gemm.py
for dt in float16 bfloat16; do
  v $G M=512 N=512 K=512 dtype=$dt threads=256 block_K=64
  v $G M=512 N=512 K=512 dtype=$dt threads=256 block_K=32
  v $G M=520 N=264 K=200 dtype=$dt threads=256 block_K=32
  v $G M=512 N=512 K=512 dtype=$dt threads=128 block_M=64 block_N=256 block_K=64
  v $G M=512 N=512 K=512 dtype=$dt threads=256 block_M=128 block_N=256 block_K=64
  v $G M=256 N=256 K=256 dtype=$dt threads=256 block_M=128 block_N=64 block_K=16 num_stages=2
  v $G M=256 N=256 K=256 dtype=$dt threads=256 block_M=128 block_N=8 block_K=128 num_stages=2
  v $G M=512 N=512 K=1024 dtype=$dt threads=256 block_N=256 block_K=64 num_stages=4
  v $G M=300 N=520 K=1000 dtype=$dt threads=256 block_N=128 block_K=64 num_stages=5
  v $G M=512 N=512 K=128 dtype=$dt threads=256 block_K=64 num_stages=3
  # several 64-row blocks per warpgroup (interleaved accumulator): the example's defaults among them
  v $G M=512 N=512 K=512 dtype=$dt
  v $G M=520 N=264 K=200 dtype=$dt
  v $G M=512 N=512 K=512 dtype=$dt block_K=64 num_stages=4
  v $G M=512 N=512 K=512 dtype=$dt threads=256 block_M=256 block_N=128 block_K=64 num_stages=4
  v $G M=384 N=256 K=256 dtype=$dt threads=128 block_M=192 block_N=64 block_K=32 num_stages=2
  # TMA loads (whole 128-byte rows, dims the tensor map divides), partial tiles zero-filled
  v $G M=296 N=320 K=576 dtype=$dt threads=256 block_N=256 block_K=64 num_stages=4
  v $G M=256 N=128 K=1024 dtype=$dt threads=128 block_K=64 num_stages=3
done
v examples/gemm_transposed.py threads=256
v examples/gemm_transposed.py threads=256 block_K=32
v examples/gemm_transposed.py threads=128 block_M=64
v examples/gemm_transposed.py
for c in True False; do
  v examples/flash_attention.py is_causal=$c
  v examples/flash_attention.py is_causal=$c threads=256 block_M=128 dim=128 seq_len=512 num_stages=2
  v examples/flash_attention.py is_causal=$c threads=256 block_M=128 block_N=128 dim=64 seq_len=300 num_stages=2
  v examples/flash_attention.py is_causal=$c block_M=128 seq_len=300
  v examples/flash_attention.py is_causal=$c block_M=128 dim=128 seq_len=512 num_stages=2
  v examples/flash_attention.py is_causal=$c threads=256 block_M=128 block_N=128 dim=128 seq_len=296 num_stages=2
done
say "verify: $pass passed, $fail failed"
# SASS
CUO=$(. tests/e2e/find_cuobjdump; find_cuobjdump 2>/dev/null)
if [ -n "$CUO" ]; then
  for spec in "$G threads=256 block_K=64" "$G" "examples/flash_attention.py threads=256 block_M=128 dim=128 num_stages=2" \
              "examples/flash_attention.py block_M=128 dim=128 num_stages=2"; do
    set -- $spec; f=$1; shift; args=""; for d in "$@"; do args="$args -D $d"; done
    # shellcheck disable=SC2086
    "$T" compile "$f" --target cuda,arch=sm_90a $args -o "$OUT/k.cubin" >/dev/null 2>&1 &&
      say "sass $spec: $("$CUO" -sass "$OUT/k.cubin" | grep -c HGMMA) HGMMA, $("$CUO" -sass "$OUT/k.cubin" | grep -c 'STL\|LDL') local-memory ops"
  done
  rm -f "$OUT/k.cubin"
fi
# bench
{ for cfg in "block_M=128 block_N=256 block_K=64 threads=256 num_stages=4" "block_M=128 block_N=128 block_K=32 threads=128 num_stages=3" \
             "block_M=128 block_N=128 block_K=64 threads=128 num_stages=4" "block_M=256 block_N=128 block_K=64 threads=256 num_stages=4" \
             "block_M=256 block_N=128 block_K=64 threads=256 num_stages=3"; do
    echo "== gemm $cfg"
    # shellcheck disable=SC2086
    timeout 150 build/bench/bench_cuda gemm $cfg 2>&1 | grep -v '^device copy'
  done
  echo "== flash attention"
  timeout 120 build/bench/bench_cuda flash_attention 2>&1
} >"$OUT/bench.log" 2>&1
grep -E 'tilec|cuBLAS|==' "$OUT/bench.log" | head -n 40 | tee -a "$SUMMARY"

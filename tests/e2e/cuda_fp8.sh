#!/bin/sh
# fp8 GEMM on sm_90a's wgmma (docs/cuda.md, "fp8 on wgmma") where CI runs it (no GPU): which
# instruction --explain reports and why an fp8 gemm with B as (K, N) stays on mma.sync; the
# kernel source's wgmma call; NVRTC's cubin whose SASS holds QGMMA (Hopper's fp8 wgmma) and no
# HMMA fallback, fed by TMA (UTMALDG) without spills; the GPU lowering of the kernel run in the
# reference interpreter; the cpu backend verified against the reference. About 15 s on 2 cores
# (plain build).
T=${TILEC:-build/tilec}
B=${TILEC_BUILD:-build}
D=$(mktemp -d /tmp/tilec-e2e-fp8-XXXXXX)
trap 'rm -rf "$D"' EXIT
export TILEC_CACHE_DIR="$D/cache"
. tests/e2e/find_cuobjdump
ok() { echo "PASS cuda fp8: $1"; }
bad() { echo "FAIL cuda fp8: $1"; [ -f "$D/err" ] && head -n 6 "$D/err"; }
G=examples/gemm_fp8.py

# --explain: wgmma m64nNk32 for K-major operands, the TMA-fed warp-specialized pipeline
"$T" source $G --target cuda,arch=sm_90a --explain --kernel-only >"$D/out" 2>"$D/err"
grep -qx '// examples/gemm_fp8.py:47:17: T.gemm 128 x 128 x 128 (float8_e4m3fn x float8_e4m3fn -> float32): wgmma m64n128k32 e4m3 x e4m3, 1 warpgroup x 2 row blocks, A and B K-major from shared memory, asynchronous mainloop' "$D/out" &&
  ok "explain: the fp8 gemm on wgmma k32" || bad "explain: fp8 wgmma line"
grep -q '^// T.Pipelined(num_stages=3): warp-specialized: a producer warpgroup (threads 128..255) loads 2 tiles per stage by TMA' "$D/out" &&
  ok "explain: fp8 tiles load by TMA, warp-specialized" || bad "explain: fp8 TMA pipeline"
grep -q 'tcg_wgmma_ss<128, 128, 128, 4, 0, 1, 128, 128, tcg_e4m3, 1, 0, 0, tcg_e4m3>(' "$D/out" &&
  ok "source: tcg_wgmma_ss with fp8 tags, no proxy fence" || bad "source: fp8 wgmma call"
"$T" source $G --target cuda,arch=sm_90a -D b_dtype=float8_e5m2 >"$D/out" 2>"$D/err"
grep -q 'wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e5m2 {' "$D/out" && grep -q '}, %64, %65, p, 1, 1; }' "$D/out" &&
  ok "source: the mixed e4m3 x e5m2 instruction, no transpose immediates" || bad "source: mixed fp8 instruction"
# fallbacks, each with its reason: B given as (K, N) (8-bit wgmma has no transpose), and sm_89
"$T" source examples/gemm.py --target cuda,arch=sm_90a --explain --kernel-only -D dtype=float8_e4m3fn >"$D/out" 2>"$D/err"
grep -qx '// examples/gemm.py:44:17: T.gemm 128 x 128 x 32 (float8_e4m3fn x float8_e4m3fn -> float32): mma.sync over 2 x 2 warps; not wgmma: fp8 wgmma reads both operands K-major: A as (M, K) and B as (N, K) with transpose_B=True (here B is (K, N))' "$D/out" &&
  ok "explain: fp8 with B as (K, N) stays on mma.sync, saying why" || bad "explain: MN-major fp8 fallback"
"$T" source $G --target cuda,arch=sm_89 --explain --kernel-only >"$D/out" 2>"$D/err"
grep -q 'mma.sync over 2 x 2 warps; not wgmma: the arch has no wgmma (sm_90a only)' "$D/out" && ok "explain: sm_89 keeps mma.sync" || bad "explain: sm_89"

# NVRTC and SASS: QGMMA of the right shape and types, no HMMA, TMA loads, no local memory
if cuobj=$(find_cuobjdump); then
  sass() { # NAME, WANT (QGMMA opcode), LOADS (UTMALDG or LDGSTS), then -D bindings
    name=$1 want=$2 loads=$3; shift 3
    args=""; for d in "$@"; do args="$args -D $d"; done
    # shellcheck disable=SC2086
    if ! "$T" compile $G --target cuda,arch=sm_90a $args -o "$D/$name.cubin" >"$D/out" 2>"$D/err"; then
      grep -q "NVRTC not found" "$D/err" && { echo "SKIP cuda fp8: NVRTC absent"; return; }
      bad "sass $name: compile failed"; return
    fi
    "$cuobj" -sass "$D/$name.cubin" >"$D/sass" 2>"$D/err"
    q=$(grep -c "$want" "$D/sass"); h=$(grep -c HMMA "$D/sass"); l=$(grep -c "$loads" "$D/sass"); s=$(grep -c -e 'STL' -e 'LDL' "$D/sass")
    if [ "$q" -gt 0 ] && [ "$h" -eq 0 ] && [ "$l" -gt 0 ] && [ "$s" -eq 0 ]; then ok "sass $name: $q $want, $l $loads, no HMMA, no spills"
    else bad "sass $name: $q $want, $h HMMA, $l $loads, $s STL/LDL"; grep -o '[A-Z]*MMA[.A-Z0-9x]*' "$D/sass" | sort | uniq -c | head -5; fi
  }
  sass default QGMMA.64x128x32.F32.E4M3.E4M3 UTMALDG
  sass e5m2 QGMMA.64x128x32.F32.E5M2.E5M2 UTMALDG a_dtype=float8_e5m2 b_dtype=float8_e5m2
  sass mixed QGMMA.64x128x32.F32.E4M3.E5M2 UTMALDG b_dtype=float8_e5m2
  sass bench_8192 QGMMA.64x256x32.F32.E4M3.E4M3 UTMALDG M=8192 N=8192 K=8192 block_N=256 threads=256 num_stages=4
  # 64- and 32-byte rows: TMA in the 64/32-byte swizzles
  sass k64_tma QGMMA.64x128x32.F32.E4M3.E4M3 UTMALDG block_K=64
  sass k32_tma QGMMA.64x128x32.F32.E4M3.E4M3 UTMALDG block_K=32
  sass k256_partial QGMMA.64x128x32.F32.E4M3.E4M3 UTMALDG M=200 N=136 K=1024 block_K=256
  # K = 1000: rows of A not 16-byte aligned, so neither TMA nor cp.async: byte loads, still QGMMA
  sass ragged_k QGMMA.64x128x32.F32.E4M3.E4M3 LDG.E.U8 M=200 N=136 K=1000 block_K=256
else
  echo "SKIP cuda fp8: no cuobjdump (pip install nvidia-cuda-cuobjdump)"
fi

# the lowered kernel (sm_90a: wgmma gemm_block, TMA, warp specialization) in the reference
# interpreter, against the tile IR
H=$B/tests/helpers/gpu_source
for args in "" "-D M=200 -D N=136 -D K=96 -D block_K=32 -D b_dtype=float8_e5m2"; do
  # shellcheck disable=SC2086
  out=$(timeout 300 "$H" $G sm_90a --interp $args 2>&1)
  if [ $? -eq 0 ] && echo "$out" | grep -q "^PASS"; then ok "lowered for sm_90a, interpreted: $G$args"
  else bad "lowered for sm_90a, interpreted: $G$args"; echo "$out" | head -n 5; fi
done
# cpu against the reference interpreter
for args in "" "-D a_dtype=float8_e5m2 -D b_dtype=float8_e5m2 -D M=130 -D N=72 -D K=160 -D block_K=32"; do
  # shellcheck disable=SC2086
  out=$("$T" run $G --verify $args 2>&1)
  if [ $? -eq 0 ] && echo "$out" | grep -q "verify C: ok"; then ok "cpu --verify $G$args"
  else bad "cpu --verify $G$args"; echo "$out" | tail -n 4; fi
done

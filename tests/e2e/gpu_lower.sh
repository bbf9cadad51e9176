#!/bin/sh
# The GPU lowering checked on the CPU, no GPU needed (run by tests/run.sh with TILEC_BUILD set):
#  - every line of tests/e2e/examples.list: the kernel lowered for cuda (sm_90a) runs as SIMT IR
#    in the reference interpreter beside the original tile IR, on the same random inputs, and
#    every tensor must agree (tests/helpers/gpu_source --interp; docs/gpu.md);
#  - one planted wrong element in the lowered run's output must be caught (--perturb);
#  - where NVRTC is installed, a handful of small kernels are printed as CUDA C++ and compiled
#    by NVRTC for sm_90a, each within 60 s (the first H200 run timed out in NVRTC on a 312 KB
#    reduce_sum) and each kernel source under 100 KB.
# About 1 minute on 2 cores (plain build), 2 minutes under ASan.
B=${TILEC_BUILD:-build}
H=$B/tests/helpers/gpu_source
if [ ! -x "$H" ]; then
  echo "FAIL gpu_lower: $H is not built (make $H)"
  exit 1
fi
J=$(nproc 2>/dev/null || echo 2)
. tests/e2e/sanitized.sh
sampled_note gpu_lower "one case of each kind, differential seeds 1 to 5, NVRTC builds for sm_90a only"

# One case: "interp FILE ARGS..." or "compile FILE ARGS...". One printf per case, so parallel
# cases never interleave their lines.
case_sh='
H=$1; mode=$2; line=$3
file=${line%% *}; args=${line#"$file"}
if [ "$mode" = interp ]; then
  # shellcheck disable=SC2086
  out=$(timeout 300 "$H" "examples/$file" sm_90a --interp $args 2>&1); rc=$?
  if [ $rc -eq 0 ] && echo "$out" | grep -q "^PASS"; then
    printf "PASS gpu_lower interp %s\n" "$line"
  else
    printf "FAIL gpu_lower interp %s (exit %s)\n%s\n" "$line" "$rc" "$(echo "$out" | head -n 8 | sed "s/^/    /")"
  fi
else
  # shellcheck disable=SC2086
  size=$("$H" "examples/$file" sm_90a $args 2>/dev/null | wc -c)
  out=$(timeout 60 "$H" "examples/$file" sm_90a --compile $args 2>&1); rc=$?
  if [ $rc -eq 0 ] && echo "$out" | grep -q "^OK" && ! echo "$out" | grep -q "^SKIP" && [ "$size" -gt 0 ] && [ "$size" -lt 102400 ]; then
    printf "PASS gpu_lower nvrtc %s (%s bytes)\n" "$line" "$size"
  else
    printf "FAIL gpu_lower nvrtc %s (exit %s, %s bytes of kernel source)\n%s\n" "$line" "$rc" "$size" \
      "$(echo "$out" | head -n 12 | sed "s/^/    /")"
  fi
fi'

grep -v -e '^#' -e '^$' tests/e2e/examples.list |
  sed 's/[[:space:]]*$//' | one_per_key | xargs -P "$J" -d '\n' -I{} sh -c "$case_sh" _ "$H" interp {}

# Tiles reduced along their rows, long enough that each warp takes whole rows (layout.c: cyclic
# rows by warp; the reductions are shuffles alone), with partial row rounds and blocks.
first_under_sanitizer <<'EOF2' | xargs -P "$J" -d '\n' -I{} sh -c "$case_sh" _ "$H" interp {}
rms_norm.py -D M=9 -D N=1024 -D block_M=4
rms_norm.py -D M=13 -D N=512 -D block_M=6
softmax.py -D m=5 -D N=2048 -D block_M=4 -D block_N=1024
fp8_cast.py -D M=7 -D N=2048 -D block_M=4 -D block_N=1024
layer_norm.py -D M=9 -D D=1024
EOF2
# TMA for rows no multiple of 8: fewer than 8 (decode) in one group whatever the tile's width (the
# short form), more in the row form (one-panel tiles); lowered and interpreted
first_under_sanitizer <<'EOF2' | xargs -P "$J" -d '\n' -I{} sh -c "$case_sh" _ "$H" interp {}
gemm.py -D M=1 -D N=256 -D K=256 -D block_M=64 -D block_N=128 -D block_K=64 -D threads=128 -D num_stages=4
gemm.py -D M=1 -D N=512 -D K=512 -D block_M=64 -D block_N=64 -D block_K=128 -D threads=128 -D num_stages=6
gemm.py -D M=5 -D N=256 -D K=384 -D block_M=64 -D block_N=128 -D block_K=128 -D threads=128 -D num_stages=4
gemm.py -D M=100 -D N=136 -D K=192 -D block_M=64 -D block_N=128 -D block_K=64 -D threads=128 -D num_stages=3
EOF2
# clusters of two (--clusters: the target option clusters=on) lower to the same meaning
first_under_sanitizer <<'EOF2' | xargs -P "$J" -d '\n' -I{} sh -c "$case_sh" _ "$H" interp {}
gemm.py --clusters -D M=200 -D N=320 -D K=192 -D block_M=128 -D block_N=256 -D block_K=64 -D threads=256 -D num_stages=3
gemm.py --clusters -D M=512 -D N=256 -D K=320 -D block_M=128 -D block_N=256 -D block_K=64 -D threads=256 -D num_stages=4
gemm.py --clusters -D M=128 -D N=256 -D K=512 -D block_M=64 -D block_N=64 -D block_K=64 -D threads=128 -D num_stages=6
gemm_fp8.py --clusters -D M=256 -D N=256 -D K=256 -D block_M=128 -D block_N=256 -D block_K=128 -D threads=256 -D num_stages=3
EOF2
# T.alloc_reducer (and plain fragments) updated from T.Parallel loops wider than their shape:
# each thread's copy starts from the op's identity and the copies are combined after the loop
# (tileops.c, par_reduce_wrap): sum, max, min, a subtraction, pipelined, partial blocks
first_under_sanitizer <<'EOF2' | xargs -P "$J" -d '\n' -I{} sh -c "$case_sh" _ "$H" interp {}
../tests/e2e/data/compat/alloc_reducer.py -D R=64 -D C=64
../tests/e2e/data/compat/alloc_reducer.py -D R=192 -D C=96
../tests/e2e/data/compat/alloc_reducer.py -D R=100 -D C=70 -D threads=32
../tests/e2e/data/compat/alloc_reducer.py -D R=128 -D C=256 -D rows=128 -D panel=128 -D threads=256
../tests/e2e/data/compat/reducer.py
EOF2
# explicit warp specialization as a ring of stages, mapped onto T.Pipelined (gpu/ws_explicit.c):
# the lowered pipeline (a producer warpgroup, TMA, full and empty mbarriers) means the program
first_under_sanitizer <<'EOF2' | xargs -P "$J" -d '\n' -I{} sh -c "$case_sh" _ "$H" interp {}
../tests/e2e/data/compat/ws_gemm.py -D M=200 -D N=136 -D K=96
../tests/e2e/data/compat/ws_gemm.py -D M=300 -D N=200 -D K=320 -D block_M=128 -D block_N=128 -D block_K=64
../tests/e2e/data/compat/ws_gemm_pipelined.py -D M=300 -D N=200 -D K=320
EOF2
# ... an update the lowering cannot combine is an error at its line, not a wrong result
D=$(mktemp -d)
sed 's/acc\[r\] += /acc[r] = acc[r] * 0.5 + /' tests/e2e/data/compat/alloc_reducer.py >"$D/bad.py"
out=$("$H" "$D/bad.py" sm_90a -D R=64 -D C=64 2>&1)
case "$out" in
*"bad.py:38:17: error: fragment 'acc' is written at fewer indices than the T.Parallel loop has"*)
  echo "PASS gpu_lower: an uncombinable update of a fragment from a wider T.Parallel loop is refused" ;;
*) printf 'FAIL gpu_lower: uncombinable reducer update\n%s\n' "$(echo "$out" | head -n 5)" ;;
esac
rm -rf "$D"
# ... and their reductions leave no shared scratch behind
for line in "rms_norm.py -D M=65536 -D N=1024 -D block_M=4" "softmax.py -D m=4096 -D N=4096 -D block_M=4 -D block_N=1024" \
  "fp8_cast.py -D M=4096 -D N=8192 -D block_M=4 -D block_N=1024"; do
  file=${line%% *}; args=${line#"$file"}
  # shellcheck disable=SC2086
  n=$("$H" "examples/$file" sm_90a $args 2>&1 | grep -c -e tcg_scratch -e 'shfl_xor')
  s=$("$H" "examples/$file" sm_90a $args 2>&1 | grep -c tcg_scratch)
  if [ "$s" -eq 0 ] && [ "$n" -gt 0 ]; then echo "PASS gpu_lower rows by warp: $line (shuffles only)"
  else echo "FAIL gpu_lower rows by warp: $line ($s lines name the shared scratch)"; fi
done

# The differential suite's random kernels (elementwise trees, tiled gemms of every operand
# dtype and transpose, reductions, scans), lowered for the GPU, against the reference too.
D=$(mktemp -d)
for gen in diff_gen diff_gen_tile; do
  for seed in $(seq 1 $([ "$sanitized" = 1 ] && echo 5 || echo 15)); do
    mkdir -p "$D/$gen-$seed" && python3 tests/e2e/$gen.py "$seed" "$D/$gen-$seed" >/dev/null 2>&1
  done
done
diff_sh='
H=$1; d=$2; f=$(ls "$d"/*.py 2>/dev/null | head -n 1); g=$(basename "$d")
out=$(timeout 300 "$H" "$f" sm_90a --interp 2>&1); rc=$?
if [ $rc -eq 0 ] && echo "$out" | grep -q "^PASS"; then printf "PASS gpu_lower differential %s\n" "$g"
else printf "FAIL gpu_lower differential %s (regenerate: python3 tests/e2e/%s.py %s DIR)\n%s\n" "$g" "${g%-*}" "${g##*-}" "$(echo "$out" | head -n 6 | sed "s/^/    /")"; fi'
ls -d "$D"/*/ | sed 's:/$::' | xargs -P "$J" -I{} sh -c "$diff_sh" _ "$H" {}
rm -rf "$D"

# Shared tiles allocated inside a T.Pipelined body are staged across the whole pipeline (their
# ALLOC moves in front of the prologue): cp.async on sm_80, TMA with warp specialization on sm_90a
for arch in sm_80 sm_90a; do
  for st in 2 3; do
    out=$(timeout 300 "$H" tests/e2e/data/compat/pipelined_alloc.py $arch --interp -D stages=$st 2>&1)
    if [ $? -eq 0 ] && echo "$out" | grep -q "^PASS"; then echo "PASS gpu_lower interp pipelined_alloc.py $arch stages=$st"
    else printf "FAIL gpu_lower interp pipelined_alloc.py %s stages=%s\n%s\n" "$arch" "$st" "$(echo "$out" | head -n 8 | sed "s/^/    /")"; fi
  done
done

# The comparison can fail: one changed output element is reported.
out=$("$H" examples/softmax.py sm_90a --interp --perturb -D m=37 -D N=300 2>&1)
rc=$?
if [ $rc -ne 0 ] && echo "$out" | grep -q "^FAIL examples/softmax.py: LSE: 1 of 37 elements differ"; then
  echo "PASS gpu_lower perturb: a planted wrong element is caught"
else
  echo "FAIL gpu_lower perturb: a planted wrong element went unnoticed (exit $rc)"
  echo "$out" | head -n 5 | sed 's/^/    /'
fi

# NVRTC: small kernels of several kinds (gemm, attention, reductions, scans, casts).
. tests/e2e/find_nvrtc
if ! find_nvrtc >/dev/null; then
  echo "SKIP gpu_lower nvrtc: NVRTC not found, the generated CUDA C++ is not compiled (sh tools/deps.sh test installs nvidia-cuda-nvrtc)"
  exit 0
fi
one_per_key <<'EOF' | xargs -P "$J" -d '\n' -I{} sh -c "$case_sh" _ "$H" compile {}
softmax.py -D m=37 -D N=300
rms_norm.py -D M=33 -D N=96
layer_norm.py -D M=7 -D D=200
cumsum.py -D M=5 -D N=130
reduce_sum.py -D M=5 -D N=100
elementwise.py -D activation=gelu_tanh -D M=64 -D N=100
fp8_cast.py -D M=1 -D N=100
cross_entropy.py -D M=16 -D V=256 -D dtype=float16
atomic_add_hist.py
gemm.py -D M=64 -D N=64 -D K=64 -D block_M=64 -D block_N=64 -D num_stages=0
flash_attention.py -D seq_len=100 -D heads=1 -D dim=32
EOF

# Every example at its default sizes compiles for sm_80 (mma.sync) and sm_90a, through the CLI
# (tilec compile: lowering, printing, NVRTC, the cubin).
T=$B/tilec
C=$(mktemp -d)
compile_sh='
T=$1; C=$2; f=$3; arch=$4; n=$(basename "$f" .py)
if out=$(timeout 120 "$T" compile "$f" --target "cuda,arch=$arch" -o "$C/$n.$arch.cubin" 2>&1) && [ -s "$C/$n.$arch.cubin" ]; then
  printf "PASS gpu_lower compile %s %s\n" "$arch" "$n"
else
  printf "FAIL gpu_lower compile %s %s\n%s\n" "$arch" "$n" "$(echo "$out" | head -n 8 | sed "s/^/    /")"
fi'
for arch in $([ "$sanitized" = 1 ] && echo sm_90a || echo sm_80 sm_90a); do
  for f in examples/*.py; do echo "$f $arch"; done
done | xargs -P "$J" -n 2 sh -c "$compile_sh" _ "$T" "$C"
# The gemm and attention examples run on the tensor cores: mma.sync (HMMA fed by LDSM) on sm_80, and on
# sm_90a wgmma (HGMMA) wherever the tile takes it (docs/cuda.md: whole warpgroups, every warp along M),
# else mma.sync; the pipelined gemm loads by TMA on sm_90a (its A tile's 64-byte rows in the
# 64-byte swizzle: UTMALDG, no LDGSTS).
. tests/e2e/find_cuobjdump
if cuobj=$(find_cuobjdump); then
  # two warps are no warpgroup: this gemm stays on mma.sync on sm_90a
  "$T" compile examples/gemm.py --target cuda,arch=sm_90a -D block_M=64 -D block_N=64 -D threads=64 \
    -o "$C/gemm_mma.sm_90a.cubin" >/dev/null 2>&1
  for n in gemm flash_attention eager_gemm gemm_mma; do
    for arch in sm_80 sm_90a; do
      [ -s "$C/$n.$arch.cubin" ] || { [ "$n" = gemm_mma ] && [ "$arch" = sm_90a ] && echo "FAIL gpu_lower sass $n: no cubin"; continue; }
      sass=$("$cuobj" -sass "$C/$n.$arch.cubin" 2>&1)
      h=$(echo "$sass" | grep -c HMMA); l=$(echo "$sass" | grep -c LDSM); g=$(echo "$sass" | grep -c HGMMA)
      case "$n.$arch" in
        gemm_mma.*|*.sm_80) ok=$([ "$h" -gt 0 ] && [ "$l" -gt 0 ] && [ "$g" -eq 0 ] && echo 1) ;;
        *) ok=$([ "$g" -gt 0 ] && echo 1) ;;  # wgmma expected
      esac
      if [ -n "$ok" ]; then echo "PASS gpu_lower sass $n $arch: $h HMMA, $l LDSM, $g HGMMA"
      else echo "FAIL gpu_lower sass $n $arch: $h HMMA, $l LDSM, $g HGMMA (not the expected tensor-core path)"; fi
    done
  done
  # the accumulator leaves through shared memory (epilogue.c): in 16-byte stores on sm_80, in TMA
  # stores on sm_90a (UTMASTG; no 16-byte global stores left)
  if [ -s "$C/gemm.sm_80.cubin" ] || [ "$sanitized" = 0 ]; then # (the sanitizer builds make sm_90a cubins only)
    v=$("$cuobj" -sass "$C/gemm.sm_80.cubin" 2>&1 | grep -c 'STG.E.128')
    if [ "$v" -gt 0 ]; then echo "PASS gpu_lower sass gemm sm_80: staged epilogue, $v STG.E.128"
    else echo "FAIL gpu_lower sass gemm sm_80: no 16-byte global stores in the epilogue"; fi
  fi
  sass=$("$cuobj" -sass "$C/gemm.sm_90a.cubin" 2>&1)
  v=$(echo "$sass" | grep -c 'UTMASTG'); s=$(echo "$sass" | grep -c 'STG.E')
  if [ "$v" -gt 0 ] && [ "$s" -eq 0 ]; then echo "PASS gpu_lower sass gemm sm_90a: staged epilogue, $v UTMASTG"
  else echo "FAIL gpu_lower sass gemm sm_90a: $v TMA stores (UTMASTG), $s plain global stores in the epilogue"; fi
  t=$(echo "$sass" | grep -c UTMALDG); a=$(echo "$sass" | grep -c LDGSTS)
  if [ "$t" -gt 0 ] && [ "$a" -eq 0 ]; then echo "PASS gpu_lower sass gemm sm_90a: TMA pipeline, $t UTMALDG"
  else echo "FAIL gpu_lower sass gemm sm_90a: $t UTMALDG, $a LDGSTS (the 128 x 128 x 32 tiles should load by TMA)"; fi
  # pipelined tiles of whole 128-byte rows load by TMA on sm_90 (UTMALDG, mbarrier waits), none by
  # cp.async: a gemm and the attention example's K/V tiles; on sm_80 the same gemm stays on cp.async
  for arch in sm_90a sm_80; do
    "$T" compile examples/gemm.py --target cuda,arch=$arch -D block_N=256 -D block_K=64 -D threads=256 -D num_stages=3 \
      -o "$C/gemm_tma.$arch.cubin" >/dev/null 2>&1
  done
  "$T" compile examples/flash_attention.py --target cuda,arch=sm_90a -D num_stages=2 -o "$C/fa_tma.sm_90a.cubin" >/dev/null 2>&1
  # row counts no multiple of 8: M = 1 (decode) in one-panel and two-panel tiles (the short form),
  # M = 100 in one-panel tiles (the row form): all TMA
  "$T" compile examples/gemm.py --target cuda,arch=sm_90a -D M=1 -D N=512 -D K=512 -D block_M=64 -D block_N=128 -D block_K=64 \
    -D threads=128 -D num_stages=4 -o "$C/gemm_rows.sm_90a.cubin" >/dev/null 2>&1
  "$T" compile examples/gemm.py --target cuda,arch=sm_90a -D M=1 -D N=512 -D K=512 -D block_M=64 -D block_N=64 -D block_K=128 \
    -D threads=128 -D num_stages=6 -o "$C/gemm_short.sm_90a.cubin" >/dev/null 2>&1
  "$T" compile examples/gemm.py --target cuda,arch=sm_90a -D M=100 -D N=512 -D K=512 -D block_M=64 -D block_N=128 -D block_K=64 \
    -D threads=128 -D num_stages=4 -o "$C/gemm_rowform.sm_90a.cubin" >/dev/null 2>&1
  for c in gemm_tma.sm_90a fa_tma.sm_90a gemm_rows.sm_90a gemm_short.sm_90a gemm_rowform.sm_90a gemm_tma.sm_80; do
    sass=$("$cuobj" -sass "$C/$c.cubin" 2>&1)
    t=$(echo "$sass" | grep -c UTMALDG); w=$(echo "$sass" | grep -c SYNCS.PHASECHK); a=$(echo "$sass" | grep -c LDGSTS)
    case $c in
      *.sm_80) ok=$([ "$t" -eq 0 ] && [ "$a" -gt 0 ] && echo 1) ;;
      *) ok=$([ "$t" -gt 0 ] && [ "$w" -gt 0 ] && [ "$a" -eq 0 ] && echo 1) ;;
    esac
    if [ -n "$ok" ]; then echo "PASS gpu_lower sass $c: $t UTMALDG, $w mbarrier waits, $a LDGSTS"
    else echo "FAIL gpu_lower sass $c: $t UTMALDG, $w mbarrier waits, $a LDGSTS (not the expected load path)"; fi
  done
  # clusters=on: B's halves by multicast TMA loads, the cluster barrier, remote arrivals (no
  # fence at GPU scope in the mainloop: the arrival is release at the block's scope, as the
  # stage's reads are finished wgmmas)
  "$T" compile examples/gemm.py --target cuda,arch=sm_90a,clusters=on -D block_N=256 -D block_K=64 -D threads=256 -D num_stages=4 \
    -o "$C/gemm_clusters.sm_90a.cubin" >/dev/null 2>&1
  sass=$("$cuobj" -sass "$C/gemm_clusters.sm_90a.cubin" 2>&1)
  m=$(echo "$sass" | grep -c 'UTMALDG.5D.MULTICAST'); b=$(echo "$sass" | grep -c 'UCGABAR_ARV'); s=$(echo "$sass" | grep -c 'STL\|LDL')
  if [ "$m" -gt 0 ] && [ "$b" -eq 3 ] && [ "$s" -eq 0 ]; then echo "PASS gpu_lower sass gemm_clusters.sm_90a: $m multicast TMA loads, $b cluster arrivals"
  else echo "FAIL gpu_lower sass gemm_clusters.sm_90a: $m multicast TMA loads, $b cluster arrivals (expected 3), $s local-memory ops"; fi
  # warp specialization on sm_90a: the producer warpgroup gives registers to the consumers
  # (USETMAXREG), the consumers free stages by mbarrier arrivals, and nothing spills
  sass=$("$cuobj" -sass "$C/gemm_tma.sm_90a.cubin" 2>&1)
  r=$(echo "$sass" | grep -c USETMAXREG); s=$(echo "$sass" | grep -c 'STL\|LDL')
  if [ "$r" -eq 2 ] && [ "$s" -eq 0 ]; then echo "PASS gpu_lower sass gemm_tma.sm_90a: warp-specialized, $r USETMAXREG, no local memory"
  else echo "FAIL gpu_lower sass gemm_tma.sm_90a: $r USETMAXREG (expected 2), $s local-memory ops"; fi
else
  echo "SKIP gpu_lower sass: no cuobjdump (sh tools/deps.sh test installs nvidia-cuda-cuobjdump)"
fi
rm -rf "$C"

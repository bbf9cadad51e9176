#!/bin/sh
# Register tiles written in T.Parallel nests through an index map other than the nest's own
# indices (tests/e2e/data/register_tiles/): `reg[i * npt + j]` over (threads, npt), reversed,
# transposed, 2-D tiles at [i, j], [j, i] and reversed, between T.copy in and out. Once such a
# 1-D tile was kept whole in every thread, each thread wrote only its own elements, and the
# copy out stored thread 0's copy: wrong on cuda and metal, right on the cpu. Each case runs on
# the cpu (against the reference interpreter), the cuda emulator (sm_80, sm_90a, sm_90a with
# the threads resumed in reverse order) and metal's (Metal 3 and 4), each checked with --verify.
# Under a sanitizer build (slow) the first shape of each case runs.
T=${TILEC:-build/tilec}
D=tests/e2e/data/register_tiles
if ! command -v "${TILEC_EMU_CXX:-c++}" >/dev/null 2>&1; then
  echo "SKIP register_tiles: no C++ compiler (${TILEC_EMU_CXX:-c++}): the emulators cannot run"; exit 0
fi
case "${TILEC_BUILD:-build}" in *asan*|*tsan*) quick=1 ;; *) quick=0 ;; esac
run() { # target order file args...
  tgt=$1 ord=$2 file=$3; shift 3
  case "$tgt" in
    cpu) out=$("$T" run "$D/$file" "$@" --target cpu --verify 2>&1) ;;
    *emu*) out=$(env TILEC_EMU_ORDER="$ord" "$T" run "$D/$file" "$@" --target "${tgt%|emu}" --backend emu --verify 2>&1) ;;
    *) out=$("$T" run "$D/$file" "$@" --target "$tgt" --verify 2>&1) ;;
  esac
  rc=$?
  if [ $rc -eq 0 ]; then echo "PASS register_tiles $tgt $ord $file $*"
  else echo "FAIL register_tiles $tgt $ord $file $* (exit $rc)"; echo "$out" | tail -n 4; fi
}
targets="cpu|forward cuda,arch=sm_80|emu|forward cuda,arch=sm_90a|emu|forward cuda,arch=sm_90a|emu|reverse metal|forward metal,metal4=1|forward"
# shapes: threads 32..256, npt 1/4/8, fp32/bf16/fp16, with and without T.if_then_else, ragged N
flat_shapes="-D_N=100_-D_threads=32_-D_npt=1_-D_dtype=float32_-D_select=0
-D_N=1024_-D_threads=128_-D_npt=4_-D_dtype=bfloat16_-D_select=1
-D_N=2088_-D_threads=256_-D_npt=8_-D_dtype=float16_-D_select=1
-D_N=1000_-D_threads=64_-D_npt=8_-D_dtype=float16_-D_select=0"
tile_shapes="-D_M=100_-D_threads=32_-D_npt=1_-D_dtype=float32_-D_select=1
-D_M=512_-D_threads=128_-D_npt=4_-D_dtype=bfloat16_-D_select=0
-D_M=520_-D_threads=256_-D_npt=8_-D_dtype=float16_-D_select=1"
for spec in $targets; do
  ord=${spec##*|}; tgt=${spec%|*}
  for order in 0 1 2; do
    n=0
    for shape in $flat_shapes; do
      n=$((n + 1)); [ $quick = 1 ] && [ $n -gt 1 ] && break
      # shellcheck disable=SC2046
      run "$tgt" "$ord" flat.py $(echo "$shape" | tr _ ' ') -D order=$order
    done
  done
  for order in 0 1 2 3; do
    n=0
    for shape in $tile_shapes; do
      n=$((n + 1)); [ $quick = 1 ] && [ $n -gt 1 ] && break
      # shellcheck disable=SC2046
      run "$tgt" "$ord" tile2d.py $(echo "$shape" | tr _ ' ') -D order=$order
    done
  done
  run "$tgt" "$ord" every_atomic.py
done
# The 1-D tile is dealt to the threads in 16-byte chunks (8 halves a thread at npt 8): no thread
# keeps the whole tile, and the copies are vector loads and stores.
src=$("$T" source "$D/flat.py" --target cuda,arch=sm_90a --kernel-only 2>&1)
if echo "$src" | grep -q 'uint16_t b[0-9]*_x_reg\[8\];' && echo "$src" | grep -q 'const uint4 tcg_v'; then
  echo "PASS register_tiles: the 1-D tile is 8 registers a thread, loaded as uint4"
else
  echo "FAIL register_tiles: the 1-D tile is 8 registers a thread, loaded as uint4"; echo "$src" | head -n 8
fi

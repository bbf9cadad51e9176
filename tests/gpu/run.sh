#!/bin/bash
# tests/gpu/run.sh: everything tilec checks on a machine with an NVIDIA GPU, in one go, for one
# device call (docs/testing.md has the command). Run from the repository root:
#     OUT=/some/dir bash tests/gpu/run.sh
# Parts (each under its own time limit; one failing part never stops the others):
#   build        make -j16 (tilec, tests, bench_cuda)
#   examples     every line of tests/e2e/examples.list: tilec run --target cuda --verify, plus one
#                planted wrong result (--perturb) that must be caught (exit 3)
#   differential the random-kernel suite (tests/e2e/diff_gen*.py, 30 seeds each) on cuda --verify
#   sanitizer    compute-sanitizer memcheck and racecheck on a few examples, where it runs
#   sass         cuobjdump -sass of the gemm and flash-attention cubins (tensor-core counts)
#   bench        build/bench/bench_cuda (cuBLAS, device copy) and bench/attention_peer.py (torch)
# Writes at most 8 files to $OUT (no subfolders): summary.txt (one line per part), build.log,
# examples.log, differential.log, sanitizer.log, sass.tar.gz, bench.log, unit.log.
# Total under 9 minutes. PARTS names the parts after the build to run (default: all of them), for a
# short device session: PARTS="examples" OUT=... bash tests/gpu/run.sh
set -u
PARTS=${PARTS:-unit examples differential sanitizer sass bench}
part() { case " $PARTS " in *" $1 "*) return 0 ;; esac; return 1; }
export T
OUT=${OUT:-$(mktemp -d /tmp/tilec-gpu-XXXXXX)}
mkdir -p "$OUT"
export TILEC_CACHE_DIR=$(mktemp -d /tmp/tilec-gpu-cache-XXXXXX)
J=${JOBS:-8}
T=build/tilec
START=$(date +%s)
SUMMARY="$OUT/summary.txt"
: >"$SUMMARY"
say() { echo "$*" | tee -a "$SUMMARY"; }
elapsed() { echo $(($(date +%s) - START)); }
count() { # file -> "P passed, F failed"
  echo "$(grep -c '^PASS' "$1" 2>/dev/null || true) passed, $(grep -c '^FAIL' "$1" 2>/dev/null || true) failed"
}

{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | head -n 2
  nvcc --version 2>&1 | tail -n 1; } | sed 's/^/machine: /' | tee -a "$SUMMARY"

# ---- build ----
. tests/gpu/dlpack.sh
if timeout 240 make -j16 -s all build/bench/bench_cuda "$@" >"$OUT/build.log" 2>&1; then
  say "build: ok ($(elapsed) s)"
else
  say "build: FAILED (see build.log)"
  tail -n 20 "$OUT/build.log"
  exit 1
fi
"$T" backends >>"$OUT/build.log" 2>&1
grep '^cuda' "$OUT/build.log" | sed 's/^/backends: /' | tee -a "$SUMMARY"

# ---- unit tests (the cuda ones see the driver here) ----
if part unit; then
{ for t in build/tests/test_cuda build/tests/test_registry build/tests/test_api; do
    timeout 60 "$t" 2>&1
  done; } >"$OUT/unit.log" 2>&1
# the device prelude's own checker: every GEMM path against a host reference, and mainloop speed
if command -v nvcc >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/nvcc ]; then
  PATH=$PATH:/usr/local/cuda/bin timeout 200 make -s prelude-check "$@" >>"$OUT/unit.log" 2>&1
  echo "[prelude-check exit $?]" >>"$OUT/unit.log"
  # the conversion instructions against the library, and the bare-conversion paths' NaN reruns
  PATH=$PATH:/usr/local/cuda/bin timeout 100 make -s conv-check "$@" >>"$OUT/unit.log" 2>&1
  timeout 120 sh tests/gpu/nan_paths.sh "$T" >>"$OUT/unit.log" 2>&1
fi
say "unit: $(count "$OUT/unit.log"); $(grep -E '^BENCH' "$OUT/unit.log" | tr -s ' ' | tr '\n' ';' | head -c 600)"
fi

# ---- examples on cuda, verified against the cpu backend ----
if part examples; then
run_line() { # one examples.list line
  file=${1%% *}; args=${1#"$file"}
  # shellcheck disable=SC2086
  if out=$(timeout 120 "$T" run "examples/$file" $args --target cuda --verify 2>&1); then
    echo "PASS run cuda $1"
  else
    rc=$?  # one printf per case, so parallel cases do not interleave their lines
    printf 'FAIL run cuda %s (exit %s)\n%s\n' "$1" "$rc" "$(echo "$out" | tail -n 6 | sed 's/^/    /')"
  fi
}
export -f run_line
# and the kernels verified so far only on the emulator (docs/cuda.md, "The emulator"):
# return_prev atomics, explicit warp specialization (mapped onto T.Pipelined, or in program order)
C=../tests/e2e/data/compat
{ grep -v -e '^#' -e '^$' tests/e2e/examples.list
  echo "$C/atomic_prev_shared.py"
  echo "$C/atomic_slots.py -D R=4 -D N=256"
  echo "$C/ws_gemm.py -D M=200 -D N=136 -D K=96"
  echo "$C/ws_gemm.py -D M=256 -D N=256 -D K=256 -D block_M=128 -D block_N=128 -D block_K=64"
  echo "$C/producer_consumer.py -D M=16 -D K=192"
  echo "$C/ws_gemm_pipelined.py -D M=300 -D N=200 -D K=320"
  echo "$C/ws_gemm_mbarrier_list.py -D M=300 -D N=200 -D K=320"
  for k in accumulate unpermute pipelined_operand; do echo "$C/global_layout.py --kernel $k"; done
  echo "$C/smem_reuse.py --kernel gemm_then_tile -D M=256 -D N=256 -D block_M=128 -D block_N=128 -D block_K=64 -D stages=4 -D threads=256"
  echo "$C/smem_reuse.py --kernel two_phases -D rows=128 -D cols=192 -D threads=256"
  echo "$C/gemm_fragment_b.py"
  echo "$C/multi_launch.py --kernel split_combine"
  echo "$C/global_views.py"
  echo "$C/reinterpret_bits.py --kernel bits -D N=64"
  echo "$C/reinterpret_bits.py --kernel widths -D N=64"
  echo "$C/jit_launches.py --kernel reverse_twice"
  echo "$C/gemm_fragment_b.py -D trans_B=True"
  echo "$C/gemm_fragment_a.py --kernel scaled_gemm"
  echo "$C/gemm_fragment_a.py --kernel scaled_gemm -D trans_A=True"
  echo "$C/gemm_fragment_a.py --kernel two_gemms"
  echo "$C/runtime_while.py"
  echo "$C/gemm_shared_slice.py --kernel split_q"
  echo "$C/gemm_shared_slice.py --kernel b_columns"
  echo "$C/parallel_cells.py"
  echo "$C/simt_gemm.py --kernel small_gemm -D M=64 -D N=1 -D K=32"
  echo "$C/simt_gemm.py --kernel small_gemm -D M=64 -D N=32 -D K=1 -D trans_A=True"
  echo "$C/simt_gemm.py --kernel small_gemm -D M=20 -D N=12 -D K=40 -D clear=True -D threads=64"
  echo "$C/simt_gemm.py --kernel grouped_scores"
  echo "$C/simt_gemm.py --kernel grouped_scores -D G=4 -D threads=128"
  echo "$C/fragment_view.py"
  echo "$C/fragment_view.py -D N=128 -D Q=2 -D H=64 -D threads=256"
  echo "$C/rng.py --kernel per_thread"
  echo "$C/rng.py --kernel one_thread"
  echo "$C/fragment_demoted.py --kernel neighbour_rows"
  echo "$C/fragment_demoted.py --kernel column_accumulator"
  echo "$C/fragment_demoted.py --kernel accumulator_rows"
  echo "$C/fragment_demoted.py --kernel accumulator_rows -D M=128 -D N=128 -D K=64 -D parts=8 -D threads=256"
  echo "$C/multi_launch.py --kernel workspace"
  echo "$C/atomic_prev.py"
  echo "$C/atomic_prev.py --bench" # verified after many launches: the workspace is zeroed before each
  echo "$C/while_gemm.py --kernel streamed_gemm"
  echo "$C/while_gemm.py --kernel streamed_gemm -D M=1000 -D N=1000 -D K=512 -D block_M=128 -D block_N=128 -D block_K=64 -D blocks=20 -D num_stages=3"
  echo "$C/while_gemm.py --kernel shared_cursor -D M=1000 -D N=256 -D blocks=7 -D threads=128"
  # 70000 blocks along y: the grid launches folded into x (meta fold=1), plain and swizzled
  echo "../tests/e2e/data/grid_limit.py --kernel rows -D N=70000 -D M=3"
  echo "../tests/e2e/data/grid_limit.py --kernel rows_swizzled -D N=70000 -D M=3"
  # register tiles written through an index map (the leaky_relu class; tests/e2e/register_tiles.sh)
  R=../tests/e2e/data/register_tiles
  for o in 0 1 2; do
    echo "$R/flat.py -D order=$o"
    echo "$R/flat.py -D order=$o -D N=2088 -D threads=256 -D npt=8 -D dtype=bfloat16"
    echo "$R/flat.py -D order=$o -D N=100 -D threads=32 -D npt=1 -D dtype=float32 -D select=0"
  done
  for o in 0 1 2 3; do echo "$R/tile2d.py -D order=$o"; echo "$R/tile2d.py -D order=$o -D M=520 -D threads=256 -D npt=8"; done
  echo "$R/every_atomic.py"
} | timeout 170 xargs -P "$J" -d '\n' -I{} bash -c 'run_line "$1"' _ {} >"$OUT/examples.log" 2>&1
# A planted wrong result must be caught: exit 3.
timeout 60 "$T" run examples/gemm.py --target cuda --verify --perturb C >>"$OUT/examples.log" 2>&1
rc=$?
[ $rc -eq 3 ] && echo "PASS perturb: a planted wrong result is caught (exit 3)" >>"$OUT/examples.log" ||
  echo "FAIL perturb: exit $rc, expected 3" >>"$OUT/examples.log"
say "examples: $(count "$OUT/examples.log") ($(elapsed) s)"
fi

# ---- differential random kernels on cuda ----
D=$(mktemp -d /tmp/tilec-gpu-diff-XXXXXX)
if ! part differential; then
  :
elif command -v python3 >/dev/null 2>&1; then
  for gen in diff_gen diff_gen_tile; do
    for seed in $(seq 1 30); do
      mkdir -p "$D/$gen-$seed" && python3 tests/e2e/$gen.py "$seed" "$D/$gen-$seed" >/dev/null 2>&1
    done
  done
  diff_one() { # folder
    f=$(ls "$1"/*.py 2>/dev/null | head -n 1); seed=${1##*-}
    [ -n "$f" ] || { echo "FAIL differential $1: generator wrote nothing"; return; }
    if out=$(timeout 60 "$T" run "$f" --target cuda --verify --seed "$seed" 2>&1); then
      echo "PASS differential cuda $(basename "$1")"
    else
      g=$(basename "$1")
      printf 'FAIL differential cuda %s (regenerate: python3 tests/e2e/%s.py %s DIR)\n%s\n' "$g" "${g%-*}" "$seed" \
        "$(echo "$out" | tail -n 4 | sed 's/^/    /')"
    fi
  }
  export -f diff_one
  ls -d "$D"/*/ | sed 's:/$::' | timeout 120 xargs -P "$J" -I{} bash -c 'diff_one "$1"' _ {} >"$OUT/differential.log" 2>&1
  say "differential: $(count "$OUT/differential.log") ($(elapsed) s)"
  # the program generator on the GPU (docs/testing.md): its findings, minimized, go to the log
  timeout "${FUZZ_SECONDS:-150}" "$T" fuzz --targets cuda --seed "${FUZZ_SEED:-1}" --count "${FUZZ_COUNT:-400}" --jobs "$J" \
    --out "$D/found" --verbose >"$D/fuzz.log" 2>&1
  grep -E '^(PASS|FAIL)' "$D/fuzz.log" | sed 's/^PASS fuzz/PASS fuzz cuda/' >>"$OUT/differential.log"
  grep -v -E '^(PASS|FAIL)' "$D/fuzz.log" >>"$OUT/differential.log"
  for f in "$D"/found/*.py; do [ -f "$f" ] && { echo "== $f"; cat "$f"; } >>"$OUT/differential.log"; done
  say "fuzz: $(grep -c '^PASS' "$D/fuzz.log") programs agree, $(grep -c '^FAIL' "$D/fuzz.log") findings ($(elapsed) s)"
else
  say "differential: skipped (no python3)"
fi

# ---- compute-sanitizer ----
CS=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null)
if ! part sanitizer; then
  :
elif [ -n "$CS" ]; then
  : >"$OUT/sanitizer.log"
  for case in "memcheck gemm.py -D M=200 -D N=136 -D K=96" "memcheck softmax.py -D m=37 -D N=300" \
              "memcheck flash_attention.py -D seq_len=100 -D is_causal=False" "racecheck gemm.py" \
              "racecheck softmax.py -D m=37 -D N=300" "racecheck flash_attention.py -D seq_len=100" \
              "memcheck softmax.py -D m=37 -D N=4096 -D block_M=1 -D block_N=4096" \
              "memcheck fp8_cast.py -D M=33 -D N=8192 -D block_M=1 -D block_N=8192" \
              "racecheck fp8_cast.py -D M=33 -D N=8192 -D block_M=1 -D block_N=8192"; do
    tool=${case%% *}; rest=${case#* }; file=${rest%% *}; args=${rest#"$file"}
    # shellcheck disable=SC2086
    timeout 60 "$CS" --tool "$tool" --error-exitcode 9 "$T" run "examples/$file" $args --target cuda \
      >"$D/cs.out" 2>&1
    rc=$?
    if [ $rc -eq 0 ]; then echo "PASS $tool $file$args"
    elif grep -q -i "not supported\|Device not supported" "$D/cs.out"; then echo "SKIP $tool: the sanitizer does not support this device"
    else echo "FAIL $tool $file$args (exit $rc)"; fi
    tail -n 12 "$D/cs.out" | sed 's/^/    /'
  done >>"$OUT/sanitizer.log" 2>&1
  say "sanitizer: $(count "$OUT/sanitizer.log") ($(elapsed) s)"
else
  say "sanitizer: skipped (compute-sanitizer not found)"
fi

# ---- SASS of the tensor-core kernels ----
. tests/e2e/find_cuobjdump
S=$(mktemp -d /tmp/tilec-gpu-sass-XXXXXX)
if ! part sass; then
  :
elif cuobj=$(find_cuobjdump); then
  line="sass:"
  for ex in gemm flash_attention; do
    if timeout 60 "$T" compile "examples/$ex.py" --target cuda -o "$S/$ex.cubin" >"$S/$ex.err" 2>&1 &&
       "$cuobj" -sass "$S/$ex.cubin" >"$S/$ex.sass" 2>&1; then
      line="$line $ex $(grep -c 'HMMA' "$S/$ex.sass") HMMA, $(grep -c 'LDSM' "$S/$ex.sass") LDSM, $(grep -c 'LDGSTS' "$S/$ex.sass") LDGSTS, $(grep -c 'UTMASTG' "$S/$ex.sass") UTMASTG;"
    else
      line="$line $ex FAILED ($(head -c 200 "$S/$ex.err"));"
    fi
  done
  tar -czf "$OUT/sass.tar.gz" -C "$S" . 2>/dev/null
  say "$line"
else
  say "sass: skipped (no cuobjdump)"
fi

# ---- benchmarks ----
if part bench; then
{ timeout 150 build/bench/bench_cuda; echo "[bench_cuda exit $?]"
  timeout 60 python3 bench/attention_peer.py; echo "[attention_peer exit $?]"; } >"$OUT/bench.log" 2>&1
figures=$(grep -E 'ratio|x device copy|TFLOP/s|no CUDA device|no torch|failed' "$OUT/bench.log" | tr -s ' ' | tr '\n' ';')
say "bench: $(echo "${figures:-see bench.log}" | head -c 900)"
fi

rm -rf "$D" "$S" "$TILEC_CACHE_DIR"
say "total: $(elapsed) s"

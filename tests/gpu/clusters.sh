#!/bin/bash
# tests/gpu/clusters.sh: the check of clusters of two with TMA multicast (the cuda target option
# clusters=on, docs/cuda.md "Clusters of two") on a machine with an sm_90 GPU, in one device call
# (about 4 minutes). Run from the repository root after building (make -j16 all build/bench/bench_cuda):
#     OUT=/some/dir bash tests/gpu/clusters.sh
# Parts: every GEMM line of tests/e2e/examples.list and larger shapes with --verify against the cpu
# backend (a cluster walks many tile pairs; fewer pairs than clusters; bf16; fp8; skinny), a planted
# wrong result (exit 3), compute-sanitizer memcheck / racecheck / synccheck on a partial 128 x 256
# tile, the multicast loads in the SASS, and GEMM f16 timed with clusters off and on, beside cuBLAS.
# Writes clusters.log (the details) and clusters_summary.txt to $OUT. When every line passes and
# the timings favour clusters, make clusters=on the default (src/target/cuda/target.c).
set -u
OUT=${OUT:-$(mktemp -d /tmp/tilec-clusters-XXXXXX)}
mkdir -p "$OUT"
export TILEC_CACHE_DIR=$(mktemp -d /tmp/tilec-clusters-cache-XXXXXX)
T=build/tilec
L="$OUT/clusters.log"
S="$OUT/clusters_summary.txt"
: >"$L"
: >"$S"
START=$(date +%s)
G="-D block_M=128 -D block_N=256 -D block_K=64 -D threads=256 -D num_stages=4"
TGT=cuda,clusters=on
verify_line() { # FILE ARGS...: one kernel on cuda with clusters, verified against the cpu backend
  # shellcheck disable=SC2086
  if out=$(timeout 120 "$T" run "examples/$1" ${*:2} --target "$TGT" --verify 2>&1); then
    echo "PASS verify clusters $*"
  else
    printf 'FAIL verify clusters %s (exit %s)\n%s\n' "$*" "$?" "$(echo "$out" | tail -n 6 | sed 's/^/    /')"
  fi
}
{
  grep -e '^gemm' tests/e2e/examples.list | while IFS= read -r line; do
    # shellcheck disable=SC2086
    verify_line $line
  done
  verify_line gemm.py -D M=4096 -D N=4096 -D K=4096 $G
  verify_line gemm.py -D M=2048 -D N=2048 -D K=1024 -D dtype=T.bfloat16 $G
  verify_line gemm.py -D M=512 -D N=768 -D K=320 $G
  verify_line gemm.py -D M=128 -D N=8192 -D K=2048 -D block_M=64 -D block_N=64 -D block_K=64 -D threads=128 -D num_stages=6
  verify_line gemm_fp8.py -D M=2048 -D N=2048 -D K=2048
  timeout 60 "$T" run examples/gemm.py $G -D M=512 -D N=512 -D K=256 --target "$TGT" --verify --perturb C >/dev/null 2>&1
  rc=$?
  [ $rc -eq 3 ] && echo "PASS perturb clusters: a planted wrong result is caught (exit 3)" || echo "FAIL perturb clusters: exit $rc"
} >>"$L" 2>&1
echo "verify: $(grep -c '^PASS' "$L") passed, $(grep -c '^FAIL' "$L") failed ($(($(date +%s) - START)) s)" | tee -a "$S"

CS=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null)
if [ -n "$CS" ]; then
  for tool in memcheck racecheck synccheck; do
    timeout 90 "$CS" --tool "$tool" --error-exitcode 9 "$T" run examples/gemm.py -D M=200 -D N=320 -D K=192 \
      -D block_M=128 -D block_N=256 -D block_K=64 -D threads=256 -D num_stages=3 --target "$TGT" >"$OUT/cs.out" 2>&1
    rc=$?
    if [ $rc -eq 0 ]; then echo "PASS $tool clusters"; else echo "FAIL $tool clusters (exit $rc)"; fi | tee -a "$S"
    tail -n 8 "$OUT/cs.out" | sed 's/^/    /' >>"$L"
  done
  rm -f "$OUT/cs.out"
fi

. tests/e2e/find_cuobjdump
if cuobj=$(find_cuobjdump) && "$T" compile examples/gemm.py --target "$TGT" $G -D M=4096 -D N=4096 -D K=4096 \
     -o "$OUT/gemm_clusters.cubin" >/dev/null 2>&1; then
  "$cuobj" -sass "$OUT/gemm_clusters.cubin" >"$OUT/gemm_clusters.sass" 2>&1
  echo "sass: $(grep -c 'UTMALDG.*MULTICAST' "$OUT/gemm_clusters.sass") multicast TMA loads, $(grep -c UCGABAR_ARV "$OUT/gemm_clusters.sass") cluster arrivals" | tee -a "$S"
  rm -f "$OUT/gemm_clusters.cubin"
fi

# GEMM f16 at 4096^3 and 8192^3, and 2048^3, clusters off then on, each beside cuBLAS, twice
for round in 1 2; do
  for tgt in cuda cuda,clusters=on; do
    for filter in "gemm float16" "gemm float16 2048^3"; do
      echo "== round $round target=$tgt $filter" >>"$L"
      timeout 60 build/bench/bench_cuda "$filter" target=$tgt block_M=128 block_N=256 block_K=64 threads=256 num_stages=4 >>"$L" 2>&1
    done
  done
done
grep -E '^==|TFLOP/s' "$L" | tr -s ' ' | tr '\n' ';' | sed 's/;==/\n==/g' | sed 's/^/bench: /' >>"$S"
echo "total: $(($(date +%s) - START)) s" | tee -a "$S"
rm -rf "$TILEC_CACHE_DIR"

# tests/gpu/setup.sh (sourced by the one-call device scripts: turns.sh, epilogue.sh, fp8.sh):
# $OUT made (a temporary folder when unset), a private kernel cache, tilec and bench_cuda built
# (exits on failure, the log in $OUT/build.log), T=build/tilec, and verify FILE KEY=VALUE...:
# `tilec run FILE --target cuda --verify -D KEY=VALUE...` under a timeout (VERIFY_TIMEOUT, 60 s),
# one PASS/FAIL line (with the failure's last lines), counted in $pass and $fail.
set -u
OUT=${OUT:-$(mktemp -d /tmp/tilec-gpu-XXXXXX)}
mkdir -p "$OUT"
TILEC_CACHE_DIR=$(mktemp -d)
export TILEC_CACHE_DIR
. tests/gpu/dlpack.sh
timeout 200 make -j16 -s all build/bench/bench_cuda "$@" >"$OUT/build.log" 2>&1 || { echo "build FAILED"; tail -30 "$OUT/build.log"; exit 1; }
T=build/tilec
pass=0
fail=0
verify() {
  f=$1; shift
  args=""; for d in "$@"; do args="$args -D $d"; done
  # shellcheck disable=SC2086
  out=$(timeout "${VERIFY_TIMEOUT:-60}" "$T" run "$f" --target cuda --verify $args 2>&1); rc=$?
  if [ $rc -eq 0 ]; then pass=$((pass+1)); echo "PASS $f $*"
  else fail=$((fail+1)); echo "FAIL($rc) $f $*"; echo "$out" | tail -n 8; fi
}

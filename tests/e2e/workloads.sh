#!/bin/sh
# The seed workloads (examples/workloads) on every target discovered here (the cpu in CI; cuda or
# metal where they run), against the cpu backend and float64 numpy: the gated chains of 11 and 20
# kernels (and the fused one), the WaveNet stack, and a small MobileNetV2. Needs python3 + numpy;
# uses the plain build's library (a sanitizer build cannot be loaded into Python).
B=${TILEC_BUILD:-build}
if [ "$B" != build ]; then echo "note: workloads: checked with the plain build only"; exit 0; fi
if ! python3 -c 'import numpy' 2>/dev/null; then
  echo "SKIP workloads: numpy not installed (sh tools/deps.sh test)"
  exit 0
fi
D=$(mktemp -d /tmp/tilec-e2e-workloads-XXXXXX)
trap 'rm -rf "$D"' EXIT
export TILEC_LIB="$PWD/$B/libtilec.so" TILEC_CACHE_DIR="${TILEC_CACHE_DIR:-$D/cache}"
W=examples/workloads
run() { # name expected-exit args...
  name=$1 want=$2
  shift 2
  python3 "$@" >"$D/out" 2>"$D/err"
  got=$?
  if [ "$got" != "$want" ]; then
    echo "FAIL workloads: $name: exit $got, expected $want"; cat "$D/out"; tail -n 15 "$D/err"; return
  fi
  # every row of the table agrees (or, when a disagreement is expected, one row says NO)
  if [ "$want" = 0 ] && grep -q ' NO$' "$D/out"; then echo "FAIL workloads: $name: a row disagrees"; cat "$D/out"; return; fi
  if ! grep -q '^cpu/cc  .*  yes$' "$D/out"; then echo "FAIL workloads: $name: no cpu row"; cat "$D/out"; return; fi
  if [ "$want" = 0 ] && ! grep -q '^numpy float64 (vs cpu) .*  yes$' "$D/out"; then
    echo "FAIL workloads: $name: no agreeing numpy row"; cat "$D/out"; return
  fi
  echo "PASS workloads: $name"
  sed -n '3,$p' "$D/out" | grep -v '^cpu/\|^numpy' | sed 's/^/note: /'
}
run "gated chain N=11" 0 $W/chain.py --stages 11
run "gated chain N=20, per stage and fused" 0 $W/chain.py --stages 20 --fused
run "WaveNet stack, 10 layers" 0 $W/wavenet.py --layers 10 --channels 16 --length 512
run "MobileNetV2, 64x64, width 0.5" 0 $W/mobilenet_v2.py --resolution 64 --width 0.5
run "a perturbed result is caught" 3 $W/wavenet.py --layers 2 --channels 8 --length 64 --perturb cpu
grep -q '^numpy float64 (vs cpu) .* NO$' "$D/out" && echo "PASS workloads: the disagreeing row says NO" ||
  { echo "FAIL workloads: the disagreeing row"; cat "$D/out"; }
# the table lists every target the registry has: run, or skipped with the reason
for t in $(python3 -c 'import sys; sys.path.insert(0, "python"); import tilec
print(" ".join(sorted({b["target"] for b in tilec.backends()})))'); do
  python3 $W/chain.py --stages 2 --rows 1 --channels 8 --no-numpy >"$D/t" 2>&1
  grep -q "^$t/\|^$t: skipped" "$D/t" && echo "PASS workloads: target $t is listed" || { echo "FAIL workloads: target $t missing"; cat "$D/t"; }
done

#!/bin/sh
# The Python package (python/tilec) and its pytest suite (python/tests), against $TILEC_BUILD's
# libtilec.so. Needs python3 with numpy and pytest; the torch and CuPy tests skip themselves where
# those are missing. A sanitizer build's library cannot be loaded into an uninstrumented Python,
# so the package is checked with the plain build only.
B=${TILEC_BUILD:-build}
if [ "$B" != build ]; then echo "note: python: checked with the plain build only"; exit 0; fi
if ! python3 -c 'import numpy, pytest' 2>/dev/null; then
  echo "SKIP python: python3 with numpy and pytest is not installed (sh tools/deps.sh test)"
  exit 0
fi
D=$(mktemp -d /tmp/tilec-e2e-python-XXXXXX)
trap 'rm -rf "$D"' EXIT
export TILEC_LIB="$PWD/$B/libtilec.so" TILEC_CACHE_DIR="${TILEC_CACHE_DIR:-$D/cache}"
python3 -m pytest -q -rA -p no:cacheprovider python/tests >"$D/out" 2>&1
rc=$?
sed -n 's/^PASSED \(.*\)$/PASS python: \1/p; s/^\(FAILED\|ERROR\) \(.*\)$/FAIL python: \2/p; s/^SKIPPED \(.*\)$/SKIP python: \1/p' "$D/out"
if [ $rc -ne 0 ] && ! grep -q '^\(FAILED\|ERROR\) ' "$D/out"; then
  echo "FAIL python: pytest exited with status $rc"
  tail -n 30 "$D/out"
fi
grep -q '^\(FAILED\|ERROR\) ' "$D/out" && sed -n '/= FAILURES =/,/short test summary/p' "$D/out" | head -n 80
# the package imports the way the README says, from a clean interpreter
if PYTHONPATH=python python3 -c 'import tilec; assert "cpu" in tilec.available_targets()' 2>"$D/err"; then
  echo "PASS python: PYTHONPATH=python python3 -c 'import tilec'"
else
  echo "FAIL python: import tilec"; cat "$D/err"
fi
# the H200 benchmark script runs end to end (on the cpu here, tiny sizes), so it does not rot
if python3 bench/workloads_bench.py --target cpu --elements 4096 --stages 3 --reps 1 --launches 200 --resolution 32 >"$D/bench" 2>&1 &&
  grep -q '^tilec, 3 kernels' "$D/bench" && grep -q '^tilec (.* kernels' "$D/bench" && grep -q '^tilec prepared launch' "$D/bench"; then
  echo "PASS python: bench/workloads_bench.py runs (cpu, tiny sizes)"
else
  echo "FAIL python: bench/workloads_bench.py"; tail -n 20 "$D/bench"
fi
# the call-overhead benchmark runs end to end (cpu rows; the cuda part says why it is skipped)
if python3 bench/python_call_overhead.py --calls 50 --rounds 1 >"$D/overhead" 2>&1 &&
  grep -q '^cpu  *elementwise' "$D/overhead" && grep -q '^cpu  *softmax' "$D/overhead" &&
  { grep -q '^cuda ' "$D/overhead" || grep -q '^skipped cuda: ' "$D/overhead"; }; then
  echo "PASS python: bench/python_call_overhead.py runs (cpu)"
else
  echo "FAIL python: bench/python_call_overhead.py"; tail -n 20 "$D/overhead"
fi
exit 0

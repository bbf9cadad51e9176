#!/bin/sh
# Random elementwise kernels (tests/e2e/diff_gen.py, fixed seeds): the cpu backend must agree with
# the reference interpreter on every one. A failure prints the seed; regenerate the kernel with
# `python3 tests/e2e/diff_gen.py SEED DIR`.
T=${TILEC:-build/tilec}
if ! command -v python3 >/dev/null 2>&1; then
  echo "PASS differential skipped: python3 not installed"
  exit 0
fi
D=$(mktemp -d /tmp/tilec-e2e-diff-XXXXXX)
trap 'rm -rf "$D"' EXIT
export TILEC_CACHE_DIR="$D/cache"
seed=1
while [ $seed -le 30 ]; do
  python3 tests/e2e/diff_gen.py $seed "$D"
  if out=$("$T" run "$D/k$seed.py" --verify --seed $seed 2>&1); then
    echo "PASS differential seed $seed"
  else
    echo "FAIL differential seed $seed"
    echo "$out" | tail -n 4
  fi
  seed=$((seed + 1))
done

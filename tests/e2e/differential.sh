#!/bin/sh
# Random kernels with fixed seeds: elementwise expression trees (tests/e2e/diff_gen.py) and tile
# operations, gemm, reductions and cumsum (tests/e2e/diff_gen_tile.py). The cpu backend must agree
# with the reference interpreter on every one. A failure prints the generator and seed; regenerate
# the kernel with `python3 tests/e2e/GENERATOR SEED DIR`. TILEC_TARGETS lists the targets
# (default cpu; cuda verifies against the cpu backend).
T=${TILEC:-build/tilec}
targets=${TILEC_TARGETS:-cpu}
if ! command -v python3 >/dev/null 2>&1; then
  echo "PASS differential skipped: python3 not installed"
  exit 0
fi
D=$(mktemp -d /tmp/tilec-e2e-diff-XXXXXX)
trap 'rm -rf "$D"' EXIT
export TILEC_CACHE_DIR="$D/cache"
for gen in diff_gen diff_gen_tile; do
  seed=1
  while [ $seed -le 30 ]; do
    python3 tests/e2e/$gen.py $seed "$D"
    f=$(ls -t "$D"/*.py | head -n 1)
    for tgt in $targets; do
      if out=$("$T" run "$f" --target "$tgt" --verify --seed $seed 2>&1); then
        echo "PASS differential $tgt $gen seed $seed"
      else
        echo "FAIL differential $tgt $gen seed $seed"
        echo "$out" | tail -n 4
      fi
    done
    rm -f "$f"
    seed=$((seed + 1))
  done
done

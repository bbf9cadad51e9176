#!/bin/sh
# Random kernels with fixed seeds: elementwise expression trees (tests/e2e/diff_gen.py) and tile
# operations, gemm, reductions and cumsum (tests/e2e/diff_gen_tile.py), on every target that can
# compile and run here (`tilec backends`: available, with a code generator). Each must agree with
# the reference interpreter (--verify); a GPU target's outputs must also agree with the cpu's
# (tests/e2e/npy_close.py). A failure prints the target, generator and seed; regenerate the
# kernel with `python3 tests/e2e/GENERATOR SEED DIR`. Where metal is usable, its Metal 4
# configuration (metal,metal4=1: matmul2d for the gemms) runs too. TILEC_TARGETS, when set,
# lists the targets instead (tests/gpu/run.sh sets cuda).
T=${TILEC:-build/tilec}
. tests/e2e/sanitized.sh
sampled_note differential "seeds 1 to 10 of each generator"
if ! command -v python3 >/dev/null 2>&1; then
  echo "SKIP differential: python3 not installed"
  exit 0
fi
D=$(mktemp -d /tmp/tilec-e2e-diff-XXXXXX)
trap 'rm -rf "$D"' EXIT
export TILEC_CACHE_DIR="$D/cache"
# targets whose default backend is usable (the "default" and "available" columns yes, no reason
# given); a target whose default is not usable runs on its emulator when that is (cuda without a
# GPU: TARGET:emu)
usable=$("$T" backends | awk 'NR > 1 && $3 == "yes" && $4 == "yes" && $5 == "-" { ok[$1] = 1; print $1 }
  NR > 1 && $2 == "emu" && $4 == "yes" && $5 == "-" { emu[$1] = 1 }
  END { for (t in emu) if (!(t in ok)) print t ":emu" }' | uniq | tr '\n' ' ')
case " $usable " in
*" cpu "*) ;;
*) echo "FAIL differential: the cpu target is not usable here ($T backends)"; exit 0 ;;
esac
case " $usable " in
*" metal "*) usable="$usable metal,metal4=1" ;;
esac
targets=${TILEC_TARGETS:-$usable}
for where in $targets; do
  target=${where%%:*}
  backend=; [ "$target" != "$where" ] && backend="--backend ${where#*:}"
  for gen in diff_gen diff_gen_tile; do
    seed=1
    while [ $seed -le "$([ "$sanitized" = 1 ] && echo 10 || echo 30)" ]; do
      python3 tests/e2e/$gen.py $seed "$D"
      f=$(ls -t "$D"/*.py | head -n 1)
      rm -rf "$D/out" "$D/cpu"
      # shellcheck disable=SC2086
      out=$("$T" run "$f" --target $target $backend --verify --seed $seed --save "$D/out" 2>&1)
      rc=$?
      if [ $rc -eq 1 ] && [ $target != cpu ] && echo "$out" | grep -q "is not supported on ${target%%,*}"; then
        # a dtype the target lacks is refused at its line, as documented (docs/metal.md), never run wrong
        echo "PASS differential $where $gen seed $seed (refused: $(echo "$out" | grep -o 'T\.[a-z]* of [^(]*is not supported on [a-z]*'))"
      elif [ $rc -ne 0 ]; then
        echo "FAIL differential $where $gen seed $seed"
        echo "$out" | tail -n 4
      elif [ $target != cpu ] && ! out=$("$T" run "$f" --target cpu --seed $seed --save "$D/cpu" 2>&1 &&
        python3 tests/e2e/npy_close.py "$D/out" "$D/cpu" 2>&1); then
        echo "FAIL differential $where $gen seed $seed: differs from cpu"
        echo "$out" | tail -n 4
      else
        echo "PASS differential $where $gen seed $seed"
      fi
      rm -f "$f"
      seed=$((seed + 1))
    done
  done
done

#!/bin/sh
# Every example prints its IR, and runs on every available target at several shapes (from
# tests/e2e/examples.list), verified against the reference interpreter (cuda: against the cpu
# backend). TILEC_TARGETS lists the targets (default cpu; tests/gpu/run.sh sets cuda).
T=${TILEC:-build/tilec}
targets=${TILEC_TARGETS:-cpu}
. tests/e2e/sanitized.sh
sampled_note examples
for f in examples/*.py; do
  name=$(basename "$f")
  if "$T" ir "$f" >/dev/null 2>"${TMPDIR:-/tmp}/tilec_ir_err.$$"; then
    echo "PASS ir $name"
  else
    echo "FAIL ir $name"; head -n 8 "${TMPDIR:-/tmp}/tilec_ir_err.$$"
  fi
  grep -q "^$name" tests/e2e/examples.list || echo "FAIL $name has no line in tests/e2e/examples.list"
done
rm -f "${TMPDIR:-/tmp}/tilec_ir_err.$$"
one_per_key <tests/e2e/examples.list | while read -r file args; do
  case "$file" in ''|'#'*) continue ;; esac
  for tgt in $targets; do
    # shellcheck disable=SC2086
    out=$("$T" run "examples/$file" $args --target "$tgt" --verify 2>&1)
    rc=$?
    if [ $rc -eq 0 ]; then
      echo "PASS run $tgt $file $args"
    else
      echo "FAIL run $tgt $file $args (exit $rc)"
      echo "$out" | tail -n 8
    fi
  done
done

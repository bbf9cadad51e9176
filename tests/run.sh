#!/bin/sh
# Run every test against each build folder named on the command line and print the totals.
#   unit tests:   BUILD/tests/test_*        (each prints PASS/FAIL lines)
#   diagnostics:  tests/diag/*.py           (exact stderr and exit code, see tests/diag/README)
#   end to end:   tests/e2e/*.sh            (each prints PASS/FAIL lines; TILEC names the CLI)
# Each suite prints one progress line as it finishes; the last line is "N passed, N failed".
passed=0
failed=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Tests never touch the user's kernel cache.
export TILEC_CACHE_DIR="$tmp/cache"
count() { # $1: output file, $2: exit code, $3: what
  p=$(grep -c '^PASS' "$1"); f=$(grep -c '^FAIL' "$1")
  if [ "$2" -ne 0 ] && [ "$f" -eq 0 ]; then
    f=1; echo "FAIL $3: exited with status $2"; tail -n 30 "$1"
  fi
  grep -A12 '^FAIL' "$1" | grep -v '^PASS' | head -n 60
  passed=$((passed + p)); failed=$((failed + f))
  # progress: one line per suite, as it finishes
  echo "  $3: $p passed, $f failed ($(( $(date +%s) - started ))s)"
}
started=$(date +%s)
cc0=${CC:-cc}
for B in "$@"; do
  [ "$B" = build ] && label="" || label="[$B] "
  # Under an AddressSanitizer build the kernels the cpu backend compiles are instrumented too:
  # the reference every backend is checked against must not write outside its own buffers.
  case "$B" in
    *asan*) CC="$cc0 -fsanitize=address,undefined -fno-sanitize-recover=undefined" ;;
    *) CC=$cc0 ;;
  esac
  export CC
  echo "== ${label}unit tests"
  for t in "$B"/tests/test_*; do
    [ -x "$t" ] || continue
    started=$(date +%s)
    TILEC_BUILD="$B" "$t" >"$tmp/out" 2>&1
    count "$tmp/out" $? "$label$t"
  done
  # A build folder holding only some unit tests (the ThreadSanitizer build) runs just those.
  [ -x "$B/tilec" ] || continue
  echo "== ${label}diagnostics"
  : >"$tmp/diag"
  started=$(date +%s)
  for f in tests/diag/*.py; do
    [ -f "$f" ] || continue
    exp="${f%.py}.expected"
    args=$(sed -n '1s/^# tilec: *//p' "$f")
    [ -n "$args" ] || args="ir"
    # shellcheck disable=SC2086
    "$B/tilec" $args "$f" >/dev/null 2>"$tmp/err"
    echo "[exit $?]" >>"$tmp/err"
    if [ -f "$exp" ] && cmp -s "$exp" "$tmp/err"; then
      echo "PASS diag $f" >>"$tmp/diag"
    else
      echo "FAIL diag $f" >>"$tmp/diag"
      diff "$exp" "$tmp/err" 2>&1 | head -n 20 >>"$tmp/diag"
    fi
  done
  count "$tmp/diag" 0 "${label}diagnostics"
  echo "== ${label}end to end"
  for s in tests/e2e/*.sh; do
    [ -f "$s" ] || continue
    started=$(date +%s)
    TILEC="$B/tilec" TILEC_BUILD="$B" sh "$s" >"$tmp/out" 2>&1
    count "$tmp/out" $? "$label$s"
  done
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]

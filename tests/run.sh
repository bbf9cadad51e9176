#!/bin/sh
# Run every test against each build folder named on the command line and print the totals.
#   unit tests:   BUILD/tests/test_*        (each prints PASS/FAIL lines)
#   diagnostics:  tests/diag/*.py           (exact stderr and exit code, see tests/diag/README)
#   end to end:   tests/e2e/*.sh            (each prints PASS/FAIL/SKIP lines; TILEC names the CLI)
# A build folder holding no tilec (the ThreadSanitizer build) runs only its unit tests.
#
# Suites run TILEC_TEST_JOBS at a time (default: the number of cores, at least 2), the longest
# first (the times of the last run, kept in BUILD/test-times.txt). Each prints one progress line
# as it finishes; while suites run, a line at least every 30 s says which and for how long. The
# last line is "N passed, N failed, N skipped" (", N skipped" when something was skipped).
#
# A check that cannot run here prints "SKIP name: reason" (a unit test that says "(skipped: ...)"
# counts the same way): skips are counted apart, never as passes. Under CI (CI=true) a skip is a
# failure, unless its reason is one no CI machine can help (no GPU or NVIDIA driver, no torch or
# CuPy, not macOS: the extended regex $TILEC_CI_SKIP_OK): CI must run everything the README
# promises (the Python suite, the SASS checks, the emulators, the numpy checks).
#
# TILEC_TEST_READY=DIR: the build folders after the first are being made meanwhile (tools/build.sh
#   builds the sanitizer folders while the first one's suites run); folder B's suites join once
#   DIR/NAME exists (NAME: B with every / as _), holding make's exit status (its log: NAME.log).
# TILEC_TEST_ONLY=REGEX: only the suites whose name (path) matches (grep -E).
# TILEC_TEST_QUICK=1: the slowest suites are left out (named below, and at the end of the run).
jobs=${TILEC_TEST_JOBS:-}
if [ -z "$jobs" ]; then
  jobs=$(nproc 2>/dev/null || echo 2)
  [ "$jobs" -ge 2 ] 2>/dev/null || jobs=2
fi
ci_ok=${TILEC_CI_SKIP_OK:-'no GPU|no CUDA device|NVIDIA driver|libcuda|torch|CuPy|cupy|macOS|Metal.framework'}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# interrupted: stop the suites running, each a subshell and all it started
killtree() {
  for c in $(ps -o pid= --ppid "$1" 2>/dev/null); do killtree "$c"; done
  kill "$1" 2>/dev/null
}
stop() {
  for f in "$tmp"/*.pid; do
    [ -f "$f" ] || continue
    read -r pid <"$f"
    killtree "$pid"
  done
  exit 130
}
trap stop INT TERM
# Tests never touch the user's kernel cache.
export TILEC_CACHE_DIR="$tmp/cache"
# NVRTC from pip (tools/deps.sh test) where no CUDA toolkit is: tilec does not look in Python's
# site-packages itself, so the tests name it
if [ -z "${TILEC_NVRTC:-}" ]; then
  . tests/e2e/find_nvrtc
  nv=$(find_nvrtc) && case "$nv" in */site-packages/*|*/dist-packages/*) export TILEC_NVRTC="$nv" ;; esac
fi
cc0=${CC:-cc}
now() { date +%s; }
t0=$(now)
rname() { echo "$1" | tr / _; }

# ---- the suites: one line each, "id weight build kind path" ----------------------------------
# weight: the seconds the suite took last time in this build folder, else a guess (2 cores; an
# ASan build runs most suites 3 to 6 times slower)
guess() { # build path
  case "$2" in
    *cuda_emu.sh) w=500 ;;
    *examples.sh|*test_cuda_prelude|*differential.sh|*gpu_lower.sh|*progfuzz.sh) w=250 ;;
    *metal.sh|*metal_runtime.sh|*cli.sh) w=100 ;;
    *register_tiles.sh|*python.sh|*as_tilelang.sh|*workloads.sh|*numpy_check.sh|*cuda_fp8.sh|*test_cpu|*pip_install.sh) w=60 ;;
    *cuda.sh|*tune.sh|*verify.sh|*test_parse|*test_dtype|*cache_compile.sh) w=30 ;;
    *) w=10 ;;
  esac
  case "$1" in *asan*) w=$((w * 4)) ;; esac
  echo $w
}
nid=0
total=0
: >"$tmp/jobs"
# TILEC_TEST_QUICK=1 (`sh tools/build.sh test quick`) leaves out the slowest suites: the sweeps of
# every example over the emulators and the GPU lowering, the random kernels (differential,
# progfuzz), the prelude's NVRTC builds.
slow='/(test_cuda_prelude|cuda_emu\.sh|gpu_lower\.sh|differential\.sh|progfuzz\.sh|metal\.sh|register_tiles\.sh)$'
: >"$tmp/left"
add() { # build kind path
  [ -n "${TILEC_TEST_ONLY:-}" ] && ! echo "$3" | grep -Eq "$TILEC_TEST_ONLY" && return
  if [ "${TILEC_TEST_QUICK:-}" = 1 ] && echo "$3" | grep -Eq "$slow"; then echo "$3" >>"$tmp/left"; return; fi
  w=$(awk -v n="$3" '$2 == n { print $1; exit }' "$1/test-times.txt" 2>/dev/null)
  nid=$((nid + 1))
  echo "$nid ${w:-$(guess "$1" "$3")} $1 $2 $3" >>"$tmp/new"
}
enumerate() { # build folder: its suites join the list (kept longest first)
  : >"$tmp/new"
  for t in "$1"/tests/test_*; do [ -x "$t" ] && add "$1" unit "$t"; done
  if [ -x "$1/tilec" ]; then
    add "$1" diag diagnostics
    for s in tests/e2e/*.sh; do [ -f "$s" ] && add "$1" e2e "$s"; done
  fi
  cat "$tmp/new" >>"$tmp/jobs"
  sort -k2,2nr -s "$tmp/jobs" >"$tmp/jobs.s" && mv "$tmp/jobs.s" "$tmp/jobs"
  total=$((total + $(wc -l <"$tmp/new")))
}
builds=$*
first=$1
pending=""   # build folders still being made
for B in $builds; do
  if [ -n "${TILEC_TEST_READY:-}" ] && [ "$B" != "$first" ]; then pending="$pending $B"; else enumerate "$B"; fi
done
echo "== $total suites of $first${pending:+, more once ${pending# } are built}; $jobs at a time"

run_suite() { # id build kind path
  B=$2
  case "$B" in
    # Under an AddressSanitizer build the kernels the cpu backend compiles are instrumented too:
    # the reference every backend is checked against must not write outside its own buffers.
    *asan*) CC="$cc0 -fsanitize=address,undefined -fno-sanitize-recover=undefined" ;;
    *) CC=$cc0 ;;
  esac
  export CC
  case "$3" in
    unit) TILEC_BUILD="$B" "$4" ;;
    e2e) TILEC="$B/tilec" TILEC_BUILD="$B" sh "$4" ;;
    diag)
      for f in tests/diag/*.py; do
        [ -f "$f" ] || continue
        exp="${f%.py}.expected"
        args=$(sed -n '1s/^# tilec: *//p' "$f")
        [ -n "$args" ] || args="ir"
        # shellcheck disable=SC2086
        "$B/tilec" $args "$f" >/dev/null 2>"$tmp/$1.err"
        echo "[exit $?]" >>"$tmp/$1.err"
        if [ -f "$exp" ] && cmp -s "$exp" "$tmp/$1.err"; then
          echo "PASS diag $f"
        else
          echo "FAIL diag $f"
          diff "$exp" "$tmp/$1.err" 2>&1 | head -n 20
        fi
      done ;;
  esac
}

passed=0
failed=0
skipped=0
count() { # output file, exit status, label, seconds
  # A unit test that says "(skipped: why)" and then passes was skipped. Under CI a skip for any
  # reason but the allowed ones fails.
  awk -v ci="${CI:-}" -v ok="$ci_ok" '
    /^ *\(skipped: / { why = $0; sub(/^ *\(skipped: */, "", why); sub(/\)$/, "", why); next }
    { line = $0 }
    /^PASS / && why != "" { line = "SKIP " substr($0, 6) ": " why }
    { why = "" }
    line ~ /^SKIP / && ci == "true" && line !~ ok { line = "FAIL (CI=true: this check must run) " substr(line, 6) }
    { print line }' "$1" >"$1.n"
  p=$(grep -c '^PASS' "$1.n"); f=$(grep -c '^FAIL' "$1.n"); s=$(grep -c '^SKIP' "$1.n")
  if [ "$2" -ne 0 ] && [ "$f" -eq 0 ]; then
    f=1; echo "FAIL $3: exited with status $2"; tail -n 30 "$1.n"
  fi
  grep -A12 '^FAIL' "$1.n" | grep -v '^PASS' | head -n 60
  grep '^SKIP' "$1.n" | head -n 10
  passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + s))
  # progress: one line per suite, as it finishes
  if [ "$s" -gt 0 ]; then echo "  $3: $p passed, $f failed, $s skipped (${4}s)"
  else echo "  $3: $p passed, $f failed (${4}s)"; fi
}
label() { # build path: "[FOLDER] path" but for build/
  if [ "$1" = build ]; then echo "$2"; else echo "[$1] $2"; fi
}

running=""   # ids of the suites running now
started=" "  # ids started
nrun=0
done_n=0
last=$(now)  # when the last line was printed
while :; do
  # build folders made meanwhile: their suites join the list
  for B in $pending; do
    f="$TILEC_TEST_READY/$(rname "$B")"
    [ -f "$f" ] || continue
    read -r st <"$f"
    pending=$(echo " $pending " | sed "s| $B | |; s/^ *//; s/ *$//")
    if [ "$st" = 0 ]; then
      n0=$total; enumerate "$B"
      echo "  ($B built after $(( $(now) - t0 ))s: $((total - n0)) more suites)"
    else
      echo "FAIL [$B]: make exited with status $st"; tail -n 20 "$f.log" 2>/dev/null
      failed=$((failed + 1))
    fi
    last=$(now)
  done
  # the suites that finished
  for id in $running; do
    [ -f "$tmp/$id.rc" ] || continue
    # shellcheck disable=SC2046
    set -- $(grep "^$id " "$tmp/jobs")
    secs=$(( $(cat "$tmp/$id.end") - $(cat "$tmp/$id.start") ))
    count "$tmp/$id.out" "$(cat "$tmp/$id.rc")" "$(label "$3" "$5")" "$secs"
    echo "$secs $5" >>"$tmp/times.$(rname "$3")"
    rm -f "$tmp/$id.pid"
    running=$(echo " $running " | sed "s/ $id / /; s/^ *//; s/ *$//")
    nrun=$((nrun - 1)); done_n=$((done_n + 1)); last=$(now)
  done
  [ -n "$pending" ] || [ "$done_n" -lt "$total" ] || break
  # start suites while there is room, the longest first
  if [ "$nrun" -lt "$jobs" ]; then
    while read -r id w B kind path; do
      [ "$nrun" -lt "$jobs" ] || break
      case "$started" in *" $id "*) continue ;; esac
      started="$started$id "
      now >"$tmp/$id.start"
      (run_suite "$id" "$B" "$kind" "$path" >"$tmp/$id.out" 2>&1 </dev/null; rc=$?; now >"$tmp/$id.end"; echo $rc >"$tmp/$id.rc") &
      echo $! >"$tmp/$id.pid"
      running="$running $id"; nrun=$((nrun + 1))
    done <"$tmp/jobs"
  fi
  # a line at least every 30 s: what runs, and for how long
  t=$(now)
  if [ $((t - last)) -ge 25 ]; then
    what=""
    for id in $running; do
      # shellcheck disable=SC2046
      set -- $(grep "^$id " "$tmp/jobs")
      what="$what, $(label "$3" "$5") $((t - $(cat "$tmp/$id.start")))s"
    done
    [ -n "$pending" ] && what="$what; ${pending# } being built"
    echo "  ... $((t - t0))s, $done_n of $total suites done; running: ${what#, }"
    last=$t
  fi
  sleep 1
done
wait
# each build folder's times, for the next run's order
for B in $builds; do
  f="$tmp/times.$(rname "$B")"
  [ -s "$f" ] && [ -d "$B" ] || continue
  # this run's times, then the earlier ones of suites this run left out
  awk 'NR == FNR { seen[$2] = 1; print; next } !($2 in seen)' "$f" "$B/test-times.txt" 2>/dev/null >"$f.all" || cp "$f" "$f.all"
  cp "$f.all" "$B/test-times.txt" 2>/dev/null
done
echo "== $(( $(now) - t0 ))s"
[ -s "$tmp/left" ] && echo "== quick: left out $(wc -l <"$tmp/left") slow suites: $(tr '\n' ' ' <"$tmp/left")"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]

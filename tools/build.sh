#!/bin/sh
# tools/build.sh: set up, build and run on a fresh Debian machine.
#   sh tools/build.sh example     install what is missing (as root), build, run examples/gemm.py on the CPU
#   sh tools/build.sh test        install what is missing (tools/deps.sh test), build, run every test
#                                 (plain and ASan+UBSan) and the threaded unit tests under TSan; the
#                                 last line reads "N passed, N failed, N skipped"
#   sh tools/build.sh test quick  the plain build's suites only, the slowest left out (the edit-test loop)
# The test run makes build-asan/ and build-tsan/ in the background while it builds build/ and runs
# its suites (tests/run.sh runs suites two at a time on two cores, and prints a line at least
# every 30 s).
set -e
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)
# make, printing a line every 30 s while it works (a fresh build takes minutes on two cores)
build() { # label, make arguments...
  label=$1; shift
  s=$(date +%s); last=$s
  make -s -j"$jobs" "$@" &
  pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    sleep 1
    t=$(date +%s)
    if [ $((t - last)) -ge 30 ]; then echo "  ... building $label ($((t - s))s)"; last=$t; fi
  done
  wait "$pid"
}
ASAN="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined"
case "${1:-}" in
  example)
    sh tools/deps.sh build
    build build/ all
    echo "\$ build/tilec run examples/gemm.py --verify"
    build/tilec run examples/gemm.py --verify ;;
  test)
    case "${2:-}" in ""|quick) ;; *) echo "usage: sh tools/build.sh test [quick]" >&2; exit 2 ;; esac
    sh tools/deps.sh test
    if [ "${2:-}" = quick ]; then
      echo "== building build/"
      build build/ all
      TILEC_TEST_QUICK=1 exec sh tests/run.sh build
    fi
    # The sanitizer builds start at once, in the background, and go on while build/'s suites run
    # (build-asan/'s suites are the longest: the sooner they start, the sooner the run ends).
    # Each writes its make status to $ready/NAME when done; tests/run.sh then starts its suites.
    ready=$(mktemp -d)
    trap 'kill $(ps -o pid= --ppid "$bpid" 2>/dev/null) "$bpid" 2>/dev/null; rm -rf "$ready"' EXIT
    (
      trap - EXIT
      make -s -j"$jobs" BUILD=build-asan OPT="-O1 -g" SAN="$ASAN" all >"$ready/build-asan.log" 2>&1
      echo $? >"$ready/build-asan"
      # The unit tests that run threads, under ThreadSanitizer too.
      make -s -j"$jobs" BUILD=build-tsan OPT="-O1 -g" SAN="-fsanitize=thread" \
        build-tsan/tests/test_api build-tsan/tests/test_cpu build-tsan/tests/test_cache >"$ready/build-tsan.log" 2>&1
      echo $? >"$ready/build-tsan"
    ) &
    bpid=$!
    echo "== building build/ (build-asan/, then build-tsan/, in the background)"
    build build/ all
    set +e
    ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 TSAN_OPTIONS=halt_on_error=1 TILEC_TEST_READY="$ready" \
      sh tests/run.sh build build-asan build-tsan
    rc=$?
    wait "$bpid" 2>/dev/null
    exit $rc ;;
  *)
    echo "usage: sh tools/build.sh example|test [quick]" >&2; exit 2 ;;
esac

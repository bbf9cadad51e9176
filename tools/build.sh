#!/bin/sh
# tools/build.sh: set up, build and run on a fresh Debian machine.
#   sh tools/build.sh example   install what is missing (as root), build, run examples/gemm.py on the CPU
#   sh tools/build.sh test      install what is missing, build, run every test (plain and ASan+UBSan),
#                               and the threaded unit tests under TSan
set -e
cd "$(dirname "$0")/.."
sh tools/deps.sh
jobs=$(nproc 2>/dev/null || echo 2)
case "${1:-}" in
  example)
    make -s -j"$jobs" all
    echo "\$ build/tilec run examples/gemm.py --verify"
    build/tilec run examples/gemm.py --verify ;;
  test)
    make -s -j"$jobs" all
    make -s -j"$jobs" BUILD=build-asan OPT="-O1 -g" \
      SAN="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined" all
    # The unit tests that run threads, under ThreadSanitizer too.
    make -s -j"$jobs" BUILD=build-tsan OPT="-O1 -g" SAN="-fsanitize=thread" \
      build-tsan/tests/test_api build-tsan/tests/test_cpu build-tsan/tests/test_cache
    ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 TSAN_OPTIONS=halt_on_error=1 \
      sh tests/run.sh build build-asan build-tsan ;;
  *)
    echo "usage: sh tools/build.sh example|test" >&2; exit 2 ;;
esac

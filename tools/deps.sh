#!/bin/sh
# Check (and, as root on Debian, install) what building and testing tilec needs.
need=""
command -v cc >/dev/null 2>&1 || need="$need gcc"
command -v make >/dev/null 2>&1 || need="$need make"
# metal's emulator builds the generated MSL with the host C++ compiler (docs/metal.md)
command -v c++ >/dev/null 2>&1 || need="$need g++"
[ -f /usr/include/dlpack/dlpack.h ] || need="$need libdlpack-dev"
command -v python3 >/dev/null 2>&1 || need="$need python3"
# `deps.sh bench`: the benchmarks compare with OpenBLAS too.
if [ "${1:-}" = bench ] && ! echo 'int main(void){return 0;}' | cc -x c - -lopenblas -o /dev/null 2>/dev/null; then
  need="$need libopenblas-dev"
fi
[ -z "$need" ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "tilec: installing:$need"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $need >/dev/null || {
    echo "tilec: apt-get install failed; run: apt-get install -y$need" >&2; exit 1; }
else
  echo "tilec: missing packages; run: sudo apt-get install -y$need" >&2
  exit 1
fi

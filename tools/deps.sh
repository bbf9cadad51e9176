#!/bin/sh
# tools/deps.sh [build|test|bench]: check (and, as root on Debian, install) what tilec needs.
#   build (default)  building tilec: a C compiler, make, the C++ compiler the emulators use,
#                    <dlpack/dlpack.h>, python3
#   test             also everything the tests use: numpy, pytest and venv for the Python suite and
#                    `pip install .`, clang, pkg-config, OpenBLAS, ml_dtypes (the dtype tests'
#                    independent reference), cuobjdump (the SASS checks) and NVRTC (the CUDA C++
#                    the tests compile; pip's nvidia-cuda-nvrtc where no CUDA toolkit is)
#   bench            build, plus OpenBLAS (the benchmarks compare with it)
# Debian's packages come first (apt-get); pip is used only for what Debian lacks (ml_dtypes, the
# nvidia-cuda-cuobjdump / nvidia-cuda-nvdisasm / nvidia-cuda-nvrtc wheels), or where `python3` is not Debian's own
# (a pyenv or venv interpreter does not see Debian's python3-* packages). Not root, or no
# apt-get: the exact commands are printed; a missing build dependency stops, a missing test
# dependency is only reported (its checks print SKIP), except under CI (CI=true), where it stops.
mode=${1:-build}
case "$mode" in build|test|bench) ;; *) echo "usage: sh tools/deps.sh [build|test|bench]" >&2; exit 2 ;; esac
cd "$(dirname "$0")/.." || exit 1
root=0
[ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && root=1
installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'ok installed'; }

# ---- Debian packages -------------------------------------------------------------------------
need=""
want() { # want PACKAGE [present-test...]: PACKAGE unless the test command succeeds
  p=$1; shift
  if [ $# -gt 0 ]; then "$@" >/dev/null 2>&1 && return 0; fi
  installed "$p" || need="$need $p"
}
has() { command -v "$1"; }
want gcc has cc
want make has make
# metal's and cuda's emulators build the generated code with the host C++ compiler (docs/metal.md)
want g++ has c++
want libdlpack-dev test -f /usr/include/dlpack/dlpack.h
want python3 has python3
case "$mode" in
  bench) want libopenblas-dev sh -c "echo 'int main(void){return 0;}' | cc -x c - -lopenblas -o /dev/null" ;;
  test)
    want clang has clang
    want pkg-config has pkg-config
    want libopenblas-dev sh -c "echo 'int main(void){return 0;}' | cc -x c - -lopenblas -o /dev/null"
    # The Python modules, from Debian when `python3` is Debian's own interpreter.
    py=$(command -v python3 2>/dev/null)
    case "$(readlink -f "${py:-/usr/bin/python3}")" in
      /usr/bin/python3*)
        want python3-numpy python3 -c 'import numpy'
        want python3-pytest python3 -c 'import pytest'
        # `python3 -m venv` (tests/e2e/pip_install.sh) needs ensurepip, which Debian packages apart
        want python3-venv python3 -c 'import ensurepip, venv'
        want python3-pip python3 -m pip --version
        want python3-setuptools python3 -c 'import setuptools'
        want python3-wheel python3 -c 'import wheel' ;;
    esac ;;
esac
if [ -n "$need" ]; then
  if [ $root = 1 ]; then
    echo "tilec: installing:$need"
    log=$(mktemp)
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $need; } >"$log" 2>&1 || {
      tail -n 20 "$log" >&2; rm -f "$log"
      echo "tilec: apt-get install failed; run: apt-get install -y$need" >&2; exit 1; }
    rm -f "$log"
  else
    echo "tilec: missing packages; run: sudo apt-get install -y$need" >&2
    exit 1
  fi
fi
[ "$mode" = test ] || exit 0

# ---- Python packages Debian lacks (or for a python3 that is not Debian's) ----------------------
pip_need=""
python3 -c 'import numpy' 2>/dev/null || pip_need="$pip_need numpy"
python3 -c 'import pytest' 2>/dev/null || pip_need="$pip_need pytest"
python3 -c 'import setuptools, wheel' 2>/dev/null || pip_need="$pip_need setuptools wheel"
# ml_dtypes 0.7 or later: earlier ones round some float64 -> float8/float4 conversions twice, and
# the dtype tests take it as their reference. It needs a newer numpy than Debian 12's, which pip
# then puts beside it (/usr/local), ahead of Debian's.
python3 -c 'import sys, ml_dtypes; sys.exit(tuple(map(int, ml_dtypes.__version__.split(".")[:2])) < (0, 7))' 2>/dev/null ||
  pip_need="$pip_need ml_dtypes>=0.7"
. tests/e2e/find_cuobjdump
find_cuobjdump >/dev/null || pip_need="$pip_need nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm"
# NVRTC, where no CUDA toolkit is: the tests compile the generated CUDA C++ with it (no GPU needed)
. tests/e2e/find_nvrtc
find_nvrtc >/dev/null || pip_need="$pip_need nvidia-cuda-nvrtc>=13,<14"
problem=""
if [ -n "$pip_need" ]; then
  if ! python3 -m pip --version >/dev/null 2>&1; then
    problem="python3 has no pip (Debian: apt-get install python3-pip); then: python3 -m pip install$pip_need"
  elif [ $root = 1 ] || [ -n "${VIRTUAL_ENV:-}" ] || [ -w "$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])' 2>/dev/null)" ]; then
    echo "tilec: pip installing:$pip_need"
    # Debian's python3 refuses pip into its own prefix (PEP 668) unless told; pip then installs
    # into /usr/local, beside Debian's packages, not over them.
    # shellcheck disable=SC2086
    PIP_ROOT_USER_ACTION=ignore PIP_DISABLE_PIP_VERSION_CHECK=1 python3 -m pip install -q $pip_need 2>/dev/null ||
      PIP_ROOT_USER_ACTION=ignore PIP_DISABLE_PIP_VERSION_CHECK=1 python3 -m pip install -q --break-system-packages $pip_need ||
      problem="pip install failed; run: python3 -m pip install --break-system-packages$pip_need"
  else
    problem="missing Python packages; run: python3 -m pip install --user$pip_need"
  fi
fi
# the venv module with ensurepip (a python3 built without it, such as Debian's without python3-venv)
python3 -c 'import ensurepip, venv' 2>/dev/null ||
  problem="${problem:+$problem; }python3 cannot make virtual environments (Debian: apt-get install python3-venv)"
if [ -n "$problem" ]; then
  echo "tilec: $problem" >&2
  # Outside CI the checks that need them print SKIP; CI must run everything the README promises.
  [ "${CI:-}" = true ] && exit 1
fi
exit 0

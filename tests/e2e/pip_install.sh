#!/bin/sh
# The Python package installed like a library (docs/python.md, "Installing"):
#   - `pip wheel .` from the repository root gives a platform wheel (py3-none-<platform>, not
#     "any") that carries tilec/libtilec.so, needing only the C library's own libraries;
#   - `pip install .` into a fresh virtual environment, then, from outside the checkout and with
#     nothing set (no TILEC_LIB, no PYTHONPATH), `import tilec` loads the package's own copy and
#     compiles and runs a small kernel on the cpu with numpy;
#   - the wheel installs into another fresh environment and runs the same kernel there;
#   - `pip install ./python` builds the same package;
#   - `make install PREFIX=...`: a copy of the package without its library finds the installed
#     one through pkg-config, and without it fails with an ImportError listing only what it tried.
# The environments see the system's site-packages (numpy, setuptools, wheel) and pip builds
# without isolation, so nothing is downloaded. make reuses $TILEC_BUILD's objects (TILEC_PY_BUILD).
B=${TILEC_BUILD:-build}
case "$B" in *asan*|*tsan*) echo "note: pip_install: checked with the plain build only"; exit 0 ;; esac
if ! python3 -c 'import ensurepip, venv' 2>/dev/null; then
  echo "SKIP pip_install: python3 cannot make virtual environments (Debian: apt-get install python3-venv; sh tools/deps.sh test)"
  exit 0
fi
if ! python3 -c 'import numpy, setuptools, wheel' 2>/dev/null || ! python3 -m pip --version >/dev/null 2>&1; then
  echo "SKIP pip_install: python3 lacks pip, numpy, setuptools or wheel (sh tools/deps.sh test)"
  exit 0
fi
D=$(mktemp -d /tmp/tilec-e2e-pip-XXXXXX)
trap 'rm -rf "$D"' EXIT
ROOT=$PWD
TILEC_PY_BUILD=$(cd "$B" && pwd)
export TILEC_CACHE_DIR="$D/cache" TILEC_PY_BUILD PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1
unset TILEC_LIB PYTHONPATH PYTHONHOME
ok() { echo "PASS pip_install: $1"; }
bad() { echo "FAIL pip_install: $1"; [ -n "${2:-}" ] && [ -f "$2" ] && tail -n 15 "$2"; }

# a small kernel, compiled from its text and run on numpy arrays, from a folder outside the checkout
cat >"$D/kernel.py" <<'EOF'
import numpy as np
import tilec
from tilec import _lib

src = '''
import tilelang.language as T

@T.prim_func
def axpb(A: T.Tensor((256,), "float32"), B: T.Tensor((256,), "float32"), C: T.Tensor((256,), "float32")):
    with T.Kernel(2, threads=128) as bx:
        for i in T.Parallel(128):
            C[bx * 128 + i] = A[bx * 128 + i] * 2 + B[bx * 128 + i]
'''
assert "cpu" in tilec.available_targets(), tilec.available_targets()
k = tilec.compile(src, target="cpu")
a = np.arange(256, dtype=np.float32)
b = np.ones(256, dtype=np.float32)
c = np.zeros(256, dtype=np.float32)
k(a, b, c)
assert np.array_equal(c, a * 2 + b), c[:8]
print(_lib.loaded_path())
EOF
runs_in() { # venv what: the kernel runs with the venv's own library
  out=$(cd "$D" && "$1/bin/python" -W ignore kernel.py 2>"$D/err")
  case "$out" in
    "$1"/lib/python*/site-packages/tilec/libtilec.so) ok "$2: import tilec and a cpu kernel, with the package's own libtilec.so" ;;
    *) bad "$2: kernel.py printed '$out'" "$D/err" ;;
  esac
}

# pip wheel .: a platform wheel holding the library
if (python3 -m pip wheel -q --no-build-isolation --no-deps -w "$D/wheels" . >"$D/log" 2>&1); then
  whl=$(ls "$D"/wheels/tilec-*.whl 2>/dev/null | head -n 1)
  case "$whl" in
    *-py3-none-linux_*.whl) ok "pip wheel . gives a platform wheel ($(basename "$whl"))" ;;
    *) bad "pip wheel . gave '$whl', not a py3-none-linux_* wheel" ;;
  esac
  if python3 -m zipfile -l "$whl" 2>/dev/null | grep -q '^tilec/libtilec.so '; then
    ok "the wheel carries tilec/libtilec.so"
    python3 -m zipfile -e "$whl" "$D/unzipped" 2>/dev/null
    needed=$(readelf -d "$D/unzipped/tilec/libtilec.so" 2>/dev/null | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
    if readelf -d "$D/unzipped/tilec/libtilec.so" 2>/dev/null | grep -q 'RPATH\|RUNPATH'; then
      bad "the wheel's libtilec.so has an RPATH/RUNPATH"
    elif echo " $needed" | grep -Eqv '^( (libc|libm|libdl|libpthread|ld-linux[-a-z0-9_]*)\.so\.[0-9]+)* $'; then
      bad "the wheel's libtilec.so needs more than the C library: $needed"
    else
      ok "the wheel's libtilec.so needs only $needed"
    fi
  else
    bad "the wheel holds no tilec/libtilec.so"
  fi
else
  bad "pip wheel ." "$D/log"
fi

# pip install . into a fresh environment
python3 -m venv --system-site-packages "$D/venv" >"$D/log" 2>&1 || bad "python3 -m venv" "$D/log"
if "$D/venv/bin/python" -m pip install -q --no-build-isolation . >"$D/log" 2>&1; then
  ok "pip install . (from the repository root)"
  runs_in "$D/venv" "pip install ."
else
  bad "pip install ." "$D/log"
fi

# the wheel, in another environment
if [ -n "${whl:-}" ] && [ -f "$whl" ]; then
  python3 -m venv --system-site-packages "$D/venv2" >"$D/log" 2>&1 || bad "python3 -m venv" "$D/log"
  if "$D/venv2/bin/python" -m pip install -q "$whl" >"$D/log" 2>&1; then
    runs_in "$D/venv2" "the wheel installed elsewhere"
  else
    bad "pip install $(basename "$whl")" "$D/log"
  fi
  # pip install ./python: the same package, library included
  if "$D/venv2/bin/python" -m pip install -q --no-build-isolation --force-reinstall --no-deps ./python >"$D/log" 2>&1; then
    runs_in "$D/venv2" "pip install ./python"
  else
    bad "pip install ./python" "$D/log"
  fi
fi

# make install: a package without its own copy finds the installed library through pkg-config
mkdir -p "$D/pkg"
cp -r python/tilec "$D/pkg/" && rm -f "$D/pkg/tilec/libtilec.so"
if make -s install BUILD="$B" PREFIX="$D/prefix" >"$D/log" 2>&1; then
  out=$(cd "$D" && PYTHONPATH="$D/pkg" PKG_CONFIG_PATH="$D/prefix/lib/pkgconfig" python3 -c \
    'import tilec; from tilec import _lib; assert "cpu" in tilec.available_targets(); print(_lib.loaded_path())' 2>"$D/err")
  if ! command -v pkg-config >/dev/null 2>&1; then
    echo "SKIP pip_install pkg-config: pkg-config is not installed (sh tools/deps.sh test)"
  elif [ "$out" = "$D/prefix/lib/libtilec.so" ]; then
    ok "make install PREFIX=...: found through pkg-config"
  else
    bad "make install PREFIX=...: loaded '$out', expected $D/prefix/lib/libtilec.so" "$D/err"
  fi
else
  bad "make install" "$D/log"
fi
# nothing to find: the error lists what was tried, each of it real
if (cd "$D" && PYTHONPATH="$D/pkg" PKG_CONFIG_PATH='' python3 -c 'import tilec; from tilec import _lib; print(_lib.loaded_path())' >"$D/out" 2>&1); then
  echo "note: pip_install: this machine has a libtilec.so installed ($(tail -n 1 "$D/out")); the error case is not checked"
else
  msg=$(grep 'ImportError' "$D/out")
  if echo "$msg" | grep -q "Tried: $D/pkg/tilec/libtilec.so (the package's own copy: no such file); libtilec.so (the system loader" &&
     echo "$msg" | grep -q "; pkg-config tilec" && ! echo "$msg" | grep -q "build/libtilec.so"; then
    ok "no library: the ImportError lists the package's copy, the loader and pkg-config, nothing else"
  else
    bad "no library: '$msg'" "$D/out"
  fi
fi
cd "$ROOT" || exit 1

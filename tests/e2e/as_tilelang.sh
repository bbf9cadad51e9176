#!/bin/sh
# TileLang-style scripts (tests/compat_scripts), unmodified, through tilec's compatibility layer:
# `python3 -m tilec.as_tilelang SCRIPT` and `-m pytest`, on the cpu target and on the cuda
# emulator (TILEC_AS_TILELANG_TARGET / _BACKEND). Each working script prints "NAME...: ok"; the
# failure scripts must stop with one message naming the API or value and the script line (exit 1,
# no traceback, nothing printed after). Needs python3 with numpy and pytest; torch parts skip
# themselves where torch is missing. Checked with the plain build only (python.sh says why).
B=${TILEC_BUILD:-build}
if [ "$B" != build ]; then echo "note: as_tilelang: checked with the plain build only"; exit 0; fi
if ! python3 -c 'import numpy, pytest' 2>/dev/null; then
  echo "SKIP as_tilelang: python3 with numpy and pytest is not installed (sh tools/deps.sh test)"
  exit 0
fi
D=$(mktemp -d /tmp/tilec-e2e-as-tilelang-XXXXXX)
trap 'rm -rf "$D"' EXIT
export TILEC_LIB="$PWD/$B/libtilec.so" TILEC_CACHE_DIR="${TILEC_CACHE_DIR:-$D/cache}"
export PYTHONPATH="$PWD/python${PYTHONPATH:+:$PYTHONPATH}"
unset TILEC_AS_TILELANG_TARGET TILEC_AS_TILELANG_BACKEND TILEC_AS_TILELANG_DUMP
S=tests/compat_scripts
layer() { # target backend script args... -> $D/out, $D/err; returns the exit status
  tgt=$1 be=$2; shift 2
  TILEC_AS_TILELANG_TARGET=$tgt TILEC_AS_TILELANG_BACKEND=$be python3 -m tilec.as_tilelang "$@" >"$D/out" 2>"$D/err"
}
show() { tail -n 15 "$D/out"; tail -n 15 "$D/err"; }
ok_script() { # label target backend script args...
  label=$1 tgt=$2 be=$3; shift 3
  if layer "$tgt" "$be" "$@" && grep -q ': ok' "$D/out"; then echo "PASS as_tilelang $label: $*"
  else echo "FAIL as_tilelang $label: $*"; show; fi
}
targets="cpu:"
if command -v "${TILEC_EMU_CXX:-c++}" >/dev/null 2>&1; then targets="$targets cuda:emu"
else echo "SKIP as_tilelang cuda/emu: no C++ compiler (${TILEC_EMU_CXX:-c++}): the cuda emulator cannot run"; fi
for spec in $targets; do
  tgt=${spec%%:*} be=${spec#*:}
  label="$tgt${be:+/$be}"
  for s in elementwise_add gemm_pipelined softmax library_kernels profiler_bench eager_add autotune_axpy; do
    ok_script "$label" "$tgt" "$be" "$S/$s.py"
  done
  ok_script "$label" "$tgt" "$be" "$S/elementwise_add.py" --m 33 --n 65
  # pass_configs reach tilec: the race the config leaves in place is a wrong result
  if layer "$tgt" "$be" "$S/pass_configs_race.py" && [ "$(cat "$D/out")" = correct ] &&
     layer "$tgt" "$be" "$S/pass_configs_race.py" config && [ "$(cat "$D/out")" = wrong ]; then
    echo "PASS as_tilelang $label: pass_configs TL_DISABLE_THREAD_STORAGE_SYNC reaches tilec (barrier without it, race with it)"
  else echo "FAIL as_tilelang $label: pass_configs_race.py (want correct, then wrong)"; show; fi
done
# TileLang's performance-regression suite shape: regression_*.py over examples' run_regression_perf
R=$S/perf/regression_example_axpy.py
if layer cpu "" "$R" && grep -q '^example_axpy: [0-9.e-]*$' "$D/out" && [ "$(grep -c '^example_axpy: ' "$D/out")" = 2 ] &&
   TL_PERF_REGRESSION_FORMAT=json TL_PERF_REGRESSION_ONLY=small layer cpu "" "$R" &&
   grep -q '^__TILELANG_PERF_RESULTS_JSON__=\[{"name":"example_axpy","latency":[0-9.e-]*,"case":"example_axpy_small"}\]$' "$D/out"; then
  echo "PASS as_tilelang: a regression_*.py suite runs (process_func, regression, its text and JSON output, a filter)"
else echo "FAIL as_tilelang: regression_example_axpy.py"; show; fi
# a pytest file on tilelang.testing, through -m pytest and through tilelang.testing.main()
pytest_file() { # how
  sed -n 's/^PASSED \(.*\)$/PASS as_tilelang pytest ('"$1"'): \1/p; s/^\(FAILED\|ERROR\) \(.*\)$/FAIL as_tilelang pytest ('"$1"'): \2/p; s/^SKIPPED \[1\] \(.*\)$/SKIP as_tilelang pytest ('"$1"'): \1/p' "$D/out"
}
layer cpu "" -m pytest -q -rA -p no:cacheprovider "$S/test_compat_kernels.py"; rc=$?
pytest_file "-m pytest"
if [ $rc -ne 0 ] && ! grep -q '^\(FAILED\|ERROR\) ' "$D/out"; then echo "FAIL as_tilelang pytest: exit status $rc"; show; fi
n=$(grep -c '^PASSED ' "$D/out")
[ "$n" -ge 7 ] || { echo "FAIL as_tilelang pytest: $n tests passed, 7 expected"; show; }
if layer cpu "" "$S/test_compat_kernels.py" -q -p no:cacheprovider && grep -q '^7 passed' "$D/out"; then
  echo "PASS as_tilelang: tilelang.testing.main() runs the file's tests (7 passed)"
else echo "FAIL as_tilelang: tilelang.testing.main()"; show; fi
# without TILEC_AS_TILELANG_TARGET: requires_cuda skips where no CUDA device is, and says why
if ! python3 -c 'import tilec, sys; sys.exit("cuda" in tilec.available_targets())' 2>/dev/null; then
  :  # a CUDA device: the tests run on it
elif python3 -m tilec.as_tilelang -m pytest -q -rs -p no:cacheprovider "$S/test_compat_kernels.py" >"$D/out" 2>"$D/err" &&
     grep -q 'SKIPPED.*no CUDA device (TILEC_AS_TILELANG_TARGET=cpu' "$D/out"; then
  echo "PASS as_tilelang: requires_cuda skips without a CUDA device or TILEC_AS_TILELANG_TARGET, saying so"
else echo "FAIL as_tilelang: requires_cuda without a device"; show; fi
# no target named, no CUDA device: the cpu target, said once on stderr
if python3 -c 'import tilec, sys; sys.exit("cuda" in tilec.available_targets())' 2>/dev/null; then
  if python3 -m tilec.as_tilelang "$S/elementwise_add.py" >"$D/out" 2>"$D/err" && grep -q ': ok' "$D/out" &&
     [ "$(grep -c "no CUDA device here: target 'auto' runs on tilec's cpu target" "$D/err")" = 1 ]; then
    echo "PASS as_tilelang: no CUDA device and no TILEC_AS_TILELANG_TARGET: the cpu target, said once"
  else echo "FAIL as_tilelang: the default target without a device"; show; fi
fi
# what tilec cannot honour: one line naming it and the script line, exit 1, nothing after
fails() { # script expected-text
  layer cpu "" "$S/$1"; rc=$?
  if [ $rc -eq 1 ] && grep -qF "$2" "$D/err" && ! grep -q 'Traceback' "$D/err" && ! grep -q 'not reached' "$D/out" &&
     [ "$(wc -l <"$D/err")" -le "${3:-1}" ]; then
    echo "PASS as_tilelang: $1 stops with: $(head -n 1 "$D/err")"
  else echo "FAIL as_tilelang: $1 (exit $rc; want '$2')"; show; fi
}
fails unsupported_api.py "tests/compat_scripts/unsupported_api.py:22: error: JITKernel.export_library is not supported by tilec"
fails bad_capture.py "tests/compat_scripts/bad_capture.py:17: error: the kernel reads 'weights', a numpy.ndarray"
fails kernel_error.py "tests/compat_scripts/kernel_error.py:13:13: error: T.copy: the source 'tile' has shape (32,)" 3
fails wrong_shape.py "tests/compat_scripts/wrong_shape.py:16: error: argument 'A' has size 32 in dimension 0, expected 64"
printf 'import tilelang\nimport tilelang.carver\n' >"$D/imp.py"
layer cpu "" "$D/imp.py"; rc=$?
if [ $rc -eq 1 ] && grep -q "imp.py:2: error: 'import tilelang.carver': tilelang.carver is not provided" "$D/err" &&
   [ "$(wc -l <"$D/err")" = 1 ]; then echo "PASS as_tilelang: an import the layer lacks is named with its line"
else echo "FAIL as_tilelang: import tilelang.carver (exit $rc)"; show; fi
printf 'import tilelang\n\n@tilelang.jit(out_idx=-1, cache_input_tensors=True)\ndef f(N):\n    pass\n' >"$D/opt.py"
layer cpu "" "$D/opt.py"; rc=$?
if [ $rc -eq 1 ] && grep -q "opt.py:3: error: tilelang.jit(cache_input_tensors=...) is not supported" "$D/err"; then
  echo "PASS as_tilelang: a tilelang.jit option tilec lacks is named with its line"
else echo "FAIL as_tilelang: tilelang.jit(cache_input_tensors=...) (exit $rc)"; show; fi
# embedding: tilec.as_tilelang.install(); nothing named tilelang is importable without it
cat >"$D/embed.py" <<'PY'
import importlib.util, sys
s = importlib.util.find_spec("tilelang")
assert s is None or "tilec" not in (s.origin or ""), s
import numpy as np, tilec.as_tilelang
tilec.as_tilelang.install()
import tilelang, tilelang.language as T
assert tilelang.__version__.endswith("tilec.0.1.0"), tilelang.__version__
@tilelang.jit(out_idx=[-1], target="cpu")
def neg(N):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            for i in T.Parallel(N):
                B[i] = -A[i]
    return main
a = np.arange(8, dtype=np.float32)
assert (neg(8)(a) == -a).all()
tilec.as_tilelang.uninstall()
assert "tilelang" not in sys.modules
PY
if python3 "$D/embed.py" >"$D/out" 2>"$D/err"; then echo "PASS as_tilelang: tilec.as_tilelang.install() in a program; uninstall() removes it"
else echo "FAIL as_tilelang: install()"; show; fi
# torch tensors (CPU here, CUDA where the kernel runs there)
if python3 -c 'import torch' 2>/dev/null; then
  ok_script torch cpu "" "$S/torch_add.py"
else
  echo "SKIP as_tilelang torch: torch is not installed (torch_add.py: torch tensors in and out, a torch reference)"
fi
exit 0

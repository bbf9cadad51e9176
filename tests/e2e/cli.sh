#!/bin/sh
# The command line as a user drives it: exit codes, --json fields, --save/--load round trips,
# verification that fails, and the admin commands.
T=${TILEC:-build/tilec}
D=$(mktemp -d /tmp/tilec-e2e-cli-XXXXXX)
trap 'rm -rf "$D"' EXIT
export TILEC_CACHE_DIR="$D/cache"
expect_exit() { # name expected command...
  name=$1 want=$2
  shift 2
  "$@" >"$D/out" 2>"$D/err"
  got=$?
  if [ "$got" = "$want" ]; then echo "PASS cli: $name (exit $got)"; else echo "FAIL cli: $name: exit $got, expected $want"; head -n 5 "$D/err"; fi
}
expect_grep() { # name pattern file
  if grep -q -- "$2" "$3"; then echo "PASS cli: $1"; else echo "FAIL cli: $1: no '$2' in"; head -n 5 "$3"; fi
}

expect_exit "--help" 0 "$T" --help
expect_grep "--help lists the commands" "source FILE" "$D/out"
expect_exit "--version" 0 "$T" --version
expect_grep "--version prints the version" "^tilec [0-9]" "$D/out"
expect_exit "no arguments" 2 "$T"
expect_exit "unknown command" 2 "$T" frobnicate
expect_exit "unknown option" 2 "$T" run examples/gemm.py --fast
expect_exit "option without value" 2 "$T" run examples/gemm.py --kernel
expect_exit "bad -D" 2 "$T" ir examples/gemm.py -D M
expect_exit "unknown -D name" 2 "$T" ir examples/gemm.py -D blok_M=64
expect_grep "unknown -D name suggests" "block_M" "$D/err"
expect_exit "missing file" 2 "$T" ir "$D/nope.py"
printf 'import tilelang.language as T\n@T.prim_func\ndef k(A: T.Tensor((4,), "flaot16")):\n    pass\n' >"$D/bad.py"
expect_exit "program error" 1 "$T" ir "$D/bad.py"
expect_grep "program error has file:line:col" "bad.py:3:" "$D/err"
expect_exit "unknown target" 2 "$T" run examples/gemm.py --target tpu
expect_exit "unavailable target" 4 "$T" run examples/gemm.py --target cuda
expect_exit "unknown backend" 2 "$T" run examples/gemm.py --backend gcc
expect_exit "verify passes" 0 "$T" run examples/softmax.py -D m=50 --verify
expect_exit "verify fails on a wrong result" 3 "$T" run examples/softmax.py -D m=50 --verify --perturb Y
expect_grep "failed verification is reported" "FAILED" "$D/out"
expect_exit "symbolic size missing" 2 "$T" run examples/symbolic_dim.py
expect_grep "symbolic size hint" "-D m=N" "$D/err"
if command -v "${TILEC_EMU_CXX:-c++}" >/dev/null 2>&1; then # the cuda emulator builds the kernel
  # 70000 blocks along y pass CUDA's limit: the grid launches folded into x, each block finding its row
  expect_exit "grid folded into x" 0 "$T" run tests/e2e/data/grid_limit.py --kernel rows --target cuda --backend emu -D N=70000 -D M=2 --verify
  expect_exit "grid folded into x, swizzled" 0 "$T" run tests/e2e/data/grid_limit.py --kernel rows_swizzled --target cuda --backend emu -D N=66000 -D M=2 --verify
  # a grid no launch can hold is refused before 700 TB of inputs are allocated (which would fail)
  expect_exit "grid past CUDA's limits" 2 "$T" run tests/e2e/data/grid_limit.py --kernel rows --target cuda --backend emu -D N=70000 -D M=40000
  expect_grep "grid past CUDA's limits is named" "kernel 'rows': launch grid (40000, 70000, 1) has more than 2^31 - 1 blocks" "$D/err"
fi

# --json has the documented fields
expect_exit "json run" 0 "$T" run examples/gemm.py -D M=64 -D N=64 -D K=64 --verify --bench --json
for f in '"kernel": "matmul"' '"target": "cpu"' '"backend": "cc"' '"cache": "' '"compile_ms": ' '"run_ms": {"median": ' \
  '"min": ' '"max": ' '"runs": ' '"verify": {"ok": true' '"max_abs_err": ' '"max_rel_err": ' '"cosine": ' '"argmax_match": '; do
  expect_grep "json field $f" "$f" "$D/out"
done
expect_exit "bench prints GFLOP/s" 0 "$T" run examples/gemm.py -D M=64 -D N=64 -D K=64 --bench
expect_grep "bench line" "GFLOP/s" "$D/out"

# --save writes every tensor; --load of the saved inputs reproduces the outputs bit for bit
expect_exit "save" 0 "$T" run examples/elementwise.py -D M=40 -D N=70 --seed 7 --save "$D/s1"
for n in A B C D; do [ -f "$D/s1/$n.npy" ] && echo "PASS cli: saved $n.npy" || echo "FAIL cli: saved $n.npy"; done
mkdir -p "$D/in" && cp "$D/s1/A.npy" "$D/s1/B.npy" "$D/s1/C.npy" "$D/in/"
expect_exit "load" 0 "$T" run examples/elementwise.py -D M=40 -D N=70 --seed 99 --load "$D/in" --save "$D/s2"
cmp -s "$D/s1/D.npy" "$D/s2/D.npy" && echo "PASS cli: --load reproduces the output" || echo "FAIL cli: --load reproduces the output"
expect_exit "load with a wrong shape" 2 "$T" run examples/elementwise.py -D M=41 -D N=70 --load "$D/in"
if command -v python3 >/dev/null 2>&1 && python3 -c 'import numpy' 2>/dev/null; then
  python3 - "$D/s1" <<'PY' && echo "PASS cli: numpy reads the saved files" || echo "FAIL cli: numpy reads the saved files"
import sys, numpy as np
d = sys.argv[1]
a = np.load(d + "/A.npy")
assert a.dtype == np.float16 and a.shape == (40, 70), (a.dtype, a.shape)
assert np.all(a != 0)
PY
fi

expect_exit "source" 0 "$T" source examples/softmax.py --kernel-only
expect_grep "source is C" "void" "$D/out"
expect_exit "backends" 0 "$T" backends
expect_grep "backends lists cpu/cc" "^cpu  *cc  *yes  *yes" "$D/out"
expect_exit "cache stats" 0 "$T" cache stats
expect_exit "cache ls" 0 "$T" cache ls
expect_exit "cache clear" 0 "$T" cache clear
expect_exit "cache bad verb" 2 "$T" cache purge

# targets: `ir --lowered --target` shows the target's description, pass list and decisions
expect_exit "ir --lowered --target cpu" 0 "$T" ir --lowered --target cpu examples/softmax.py
expect_grep "the cpu description" "^# target cpu: arch native, warp 1, max threads per block 1024" "$D/out"
expect_grep "the cpu pass list" "^# passes of target cpu: cpu-launch-check cpu-plan$" "$D/out"
expect_grep "the cpu plan" "^# cpu plan: 128 threads per block" "$D/out"
expect_grep "the plan's tile op" "^#  once T.fill (line 39)$" "$D/out"
"$T" ir --lowered examples/softmax.py >"$D/plain"
if grep -q "^# " "$D/plain"; then echo "FAIL cli: ir --lowered without --target shows target lines"; else echo "PASS cli: ir --lowered without --target shows no target lines"; fi
expect_exit "ir --lowered --target cuda,arch=sm_86" 0 "$T" ir --lowered --target cuda,arch=sm_86 examples/softmax.py
expect_grep "the sm_86 description" "^# target cuda: arch sm_86, warp 32, max threads per block 1024, shared memory per block 101376 bytes$" "$D/out"
expect_exit "unknown target option" 2 "$T" ir --lowered --target cuda,sm=90 examples/softmax.py
expect_grep "unknown target option names the valid ones" "unknown option 'sm' for target 'cuda' (valid options: arch, clusters, streamk, plant)" "$D/err"
expect_exit "unknown cuda arch" 2 "$T" source --target cuda,arch=sm_70 examples/softmax.py
expect_grep "unknown cuda arch names the supported ones" "unknown cuda arch 'sm_70' (supported: sm_80, sm_86, sm_89, sm_90, sm_90a)" "$D/err"
# ir --list: the file's kernels, one a line (tests/compat uses it to skip helpers)
printf 'import tilelang\nimport tilelang.language as T\ndef helper(n):\n    return n\n@tilelang.jit\ndef fa(N):\n    @T.prim_func\n    def k(A: T.Tensor((N,), "float32")):\n        with T.Kernel(1) as bx:\n            A[0] = 1.0\n    return k\n@T.prim_func\ndef kb(A: T.Tensor((4,), "float32")):\n    with T.Kernel(1) as bx:\n        A[0] = 1.0\n' >"$D/two.py"
expect_exit "ir --list" 0 "$T" ir "$D/two.py" --list
if [ "$(tr '\n' ' ' <"$D/out")" = "fa kb " ]; then echo "PASS cli: ir --list names the kernels alone"; else echo "FAIL cli: ir --list printed:"; cat "$D/out"; fi
expect_exit "--list outside ir" 2 "$T" run "$D/two.py" --list
# a read of on-chip memory before anything writes it: a located warning from every command that
# compiles, exit status unchanged (docs/cli.md, "Warnings")
U=tests/diag/uninit_gemm_accumulator.py
for cmd in "compile $U -o $D/u.so" "run $U" "source $U --target cuda" "verify $U"; do
  # shellcheck disable=SC2086
  "$T" $cmd >"$D/out" 2>"$D/err"; rc=$?
  if [ $rc -eq 0 ] && [ "$(grep -c "^$U:12:9: warning: T.gemm adds its product to 'acc'" "$D/err")" = 1 ]; then
    echo "PASS cli: ${cmd%% *} warns once of the uncleared accumulator"
  else echo "FAIL cli: ${cmd%% *} (exit $rc) did not warn once:"; cat "$D/err"; fi
done

#!/bin/sh
# What a new user meets on the command line (issue 10, section 4): help for every command,
# `tilec source` without a compiler, and the errors and hints of a first session.
T=${TILEC:-build/tilec}
D=$(mktemp -d /tmp/tilec-e2e-usab-XXXXXX)
trap 'rm -rf "$D"' EXIT
export TILEC_CACHE_DIR="$D/cache"
pass() { echo "PASS cli_usability: $1"; }
fail() { echo "FAIL cli_usability: $1"; }
expect() { # name expected-exit expected-stderr-or-stdout-pattern command...
  name=$1 want=$2 pat=$3
  shift 3
  "$@" >"$D/out" 2>"$D/err"
  got=$?
  if [ "$got" != "$want" ]; then fail "$name: exit $got, expected $want"; head -n 8 "$D/err"; return; fi
  if [ -n "$pat" ] && ! grep -q -- "$pat" "$D/out" "$D/err"; then fail "$name: no '$pat' in"; head -n 8 "$D/out" "$D/err"; return; fi
  pass "$name"
}

# help for every command, with -h, --help and `tilec help CMD`
for c in ir run source compile backends cache; do
  expect "tilec $c --help" 0 "usage: tilec $c" "$T" "$c" --help
  expect "tilec $c -h" 0 "usage: tilec $c" "$T" "$c" -h
  expect "tilec help $c" 0 "usage: tilec $c" "$T" help "$c"
done
expect "help after other options" 0 "usage: tilec run" "$T" run examples/gemm.py -D M=64 --verify --help
expect "help for an unknown command" 2 "no help for unknown command" "$T" help frob

# a dtype parameter bound the way the kernel file writes it, and a wrong one still explained
expect "-D dtype=T.bfloat16" 0 "verify C: ok" "$T" run examples/gemm.py -D M=64 -D N=64 -D K=64 -D dtype=T.bfloat16 --verify
"$T" ir examples/gemm.py -D M=64 -D N=64 -D K=64 -D dtype=T.bfloat16 >"$D/ir" 2>&1
grep -q 'bfloat16' "$D/ir" && pass "-D dtype=T.bfloat16 reaches the IR" || fail "-D dtype=T.bfloat16 reaches the IR"
expect "-D dtype=T.bfloat17" 1 "unknown dtype 'T.bfloat17'; did you mean 'bfloat16'?" "$T" run examples/gemm.py -D M=64 -D dtype=T.bfloat17

# `tilec source` generates only: no compiler runs (a failing CC would fail a build)
expect "source with a broken C compiler" 0 "void" env CC=false "$T" source examples/gemm.py -D M=300
expect "source --kernel-only with a broken C compiler" 0 "" env CC=false "$T" source examples/softmax.py --kernel-only
"$T" source examples/gemm.py -D M=300 >"$D/a.c" 2>/dev/null
"$T" run examples/gemm.py -D M=300 >/dev/null 2>&1
"$T" source examples/gemm.py -D M=300 >"$D/b.c" 2>/dev/null
cmp -s "$D/a.c" "$D/b.c" && pass "source text is the same before and after a build" || fail "source text is the same before and after a build"

# -D overrides a module-level constant, so an example can be shrunk
cat >"$D/modc.py" <<'PY'
import tilelang
import tilelang.language as T

M = 8192
N = 1024

@tilelang.jit
def scale(block_M=64, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
            for i, j in T.Parallel(block_M, N):
                B[bx * block_M + i, j] = A[bx * block_M + i, j] * 2
    return main
PY
expect "-D overrides a module constant" 0 "kernel scale(A: float32\[100, 32\]" "$T" ir "$D/modc.py" -D M=100 -D N=32
expect "-D shrunk example verifies" 0 "verify B: ok" "$T" run "$D/modc.py" -D M=100 -D N=32 --verify
expect "-D of an unknown name lists module constants" 2 "parameters: block_M, dtype, M, N" "$T" ir "$D/modc.py" -D Q=1

# --bench reports FLOP/s for flash attention (GEMM work counted per block, causal or not)
expect "flash attention --bench reports GFLOP/s" 0 "GFLOP/s" "$T" run examples/flash_attention.py --bench
expect "causal=False flash attention --bench reports GFLOP/s" 0 "GFLOP/s" "$T" run examples/flash_attention.py -D is_causal=False --bench

# a NUL byte, an empty file and a file without a kernel: errors with file:line:col
printf 'import tilelang\nx = 1\000\n' >"$D/nul.py"
expect "NUL byte has its line:col" 1 "nul.py:2:6: error: source code cannot contain null bytes" "$T" ir "$D/nul.py"
: >"$D/empty.py"
expect "empty file has a line:col" 1 "empty.py:1:1: error: the file is empty" "$T" ir "$D/empty.py"
printf 'import tilelang\nx = 1\n' >"$D/nok.py"
expect "no kernel has a line:col" 1 "nok.py:1:1: error: program defines no kernel" "$T" ir "$D/nok.py"

# the test command shows progress: a line per suite as it finishes (a fake build folder with
# one unit test and no tilec, so only the unit-test stage runs)
mkdir -p "$D/fakebuild/tests"
printf '#!/bin/sh\necho "PASS one"\necho "PASS two"\n' >"$D/fakebuild/tests/test_fake"
chmod +x "$D/fakebuild/tests/test_fake"
env -u TILEC_TEST_ONLY -u TILEC_TEST_QUICK sh tests/run.sh "$D/fakebuild" >"$D/progress.txt" 2>&1
grep -q "^  \[$D/fakebuild\] $D/fakebuild/tests/test_fake: 2 passed, 0 failed ([0-9]*s)$" "$D/progress.txt" &&
  tail -n 1 "$D/progress.txt" | grep -qx "2 passed, 0 failed, 0 skipped" && pass "test command prints a progress line per suite" ||
  { fail "test command prints a progress line per suite"; cat "$D/progress.txt"; }

# a result far from the reference, not rounding apart: the note points at the inputs' range and
# --load; with loaded inputs it is not repeated
expect "verify far off: a note on the inputs' range" 3 "give them with --load DIR" "$T" run tests/e2e/data/chaotic_map.py --verify
# on an emulated GPU the cpu backend and the interpreter are asked too: when they agree with each
# other the note blames tilec's GPU code, never the inputs; when they differ as much, the inputs
expect "verify of a GPU target that alone is wrong: the note blames tilec" 3 "that is a bug in tilec's cuda code, not in the kernel or its inputs" \
  "$T" run tests/e2e/data/register_tiles/flat.py -D N=64 -D threads=32 -D npt=2 --target cuda --backend emu --verify --perturb y
"$T" run tests/e2e/data/register_tiles/flat.py -D N=64 -D threads=32 -D npt=2 --target cuda --backend emu --verify --perturb y \
  >/dev/null 2>"$D/err"
if ! grep -q "load DIR" "$D/err"; then pass "verify of a GPU target that alone is wrong: no word on the inputs"
else fail "verify of a GPU target that alone is wrong: no word on the inputs"; cat "$D/err"; fi
expect "verify far off on a GPU target where the references differ too: the inputs' range" 3 \
  "the cpu backend and tilec's reference interpreter differ as much" \
  "$T" run tests/e2e/data/chaotic_map.py --target cuda --backend emu --verify
expect "verify of a GPU target reading an integer input: the note names it" 3 "unless the integer tensor 'Idx' must hold valid" \
  "$T" run tests/e2e/data/gather_rows.py --target cuda --backend emu --verify --perturb Out
mkdir -p "$D/in"
"$T" run tests/e2e/data/chaotic_map.py --save "$D/in" >/dev/null 2>&1
"$T" run tests/e2e/data/chaotic_map.py --verify --load "$D/in" >"$D/out" 2>"$D/err"
if [ $? -eq 3 ] && ! grep -q "give them with --load" "$D/err"; then pass "verify far off with --load: no note"
else fail "verify far off with --load: the note, or not exit 3"; head -n 4 "$D/err"; fi

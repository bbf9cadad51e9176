#!/bin/sh
# `tilec verify`: every backend the registry lists is either run and compared or skipped with its
# reason; a disagreement exits 3; --json carries the same rows.
T=${TILEC:-build/tilec}
D=$(mktemp -d /tmp/tilec-e2e-verify-XXXXXX)
trap 'rm -rf "$D"' EXIT
export TILEC_CACHE_DIR="$D/cache"
expect_exit() { # name expected command...
  name=$1 want=$2
  shift 2
  "$@" >"$D/out" 2>"$D/err"
  got=$?
  if [ "$got" = "$want" ]; then echo "PASS verify: $name (exit $got)"; else echo "FAIL verify: $name: exit $got, expected $want"; head -n 5 "$D/err" "$D/out"; fi
}
expect_grep() { # name pattern file
  if grep -q -- "$2" "$3"; then echo "PASS verify: $1"; else echo "FAIL verify: $1: no '$2' in"; head -n 8 "$3"; fi
}

expect_exit "softmax on every backend" 0 "$T" verify examples/softmax.py -D m=40
expect_grep "table header" "^backend  *output  *max_abs  *max_rel  *cosine  *argmax  *ok" "$D/out"
expect_grep "cpu row for Y" "^cpu/cc  *Y .* yes  *yes$" "$D/out"
expect_grep "cpu row for LSE" "^cpu/cc  *LSE .* yes  *yes$" "$D/out"
cp "$D/out" "$D/table"
# every backend of `tilec backends` has a row or a skipped/FAILED line: discovered from the registry
"$T" backends | awk 'NR > 1 && $1 !~ /\// { print $1 "/" $2 }' >"$D/listed"  # table rows, not the details lines (target/backend key: value)
missing=""
for b in $(cat "$D/listed"); do grep -q "^$b " "$D/table" || missing="$missing $b"; done
[ -z "$missing" ] && [ -s "$D/listed" ] && echo "PASS verify: every registered backend appears" || echo "FAIL verify: backends missing from the table:$missing"
expect_exit "a perturbed output disagrees" 3 "$T" verify examples/softmax.py -D m=40 --perturb LSE
expect_grep "the disagreeing row says NO" "^cpu/cc  *LSE .* NO$" "$D/out"
expect_grep "the failure is reported" "verification failed" "$D/err"
expect_exit "--reference cpu" 0 "$T" verify examples/gemm.py -D M=64 -D N=64 -D K=64 --reference cpu
expect_grep "against the cpu backend" "against the cpu backend" "$D/out"
expect_exit "--json" 0 "$T" verify examples/rms_norm.py --json
if command -v python3 >/dev/null 2>&1; then
  if python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
rows = {b["backend"]: b for b in d["backends"]}
assert d["ok"] is True and d["reference"] == "interp", d
assert rows["cpu/cc"]["status"] == "ran" and rows["cpu/cc"]["outputs"][0]["ok"] is True
assert all(b["status"] in ("ran", "skipped", "failed") for b in d["backends"])
assert all(b.get("reason") for b in d["backends"] if b["status"] != "ran")' "$D/out"; then
    echo "PASS verify: --json parses with every row"
  else
    echo "FAIL verify: --json"; head -c 600 "$D/out"
  fi
fi
expect_exit "--json with a disagreement" 3 "$T" verify examples/rms_norm.py --json --perturb Y
expect_grep "--json ok false" '"ok": false' "$D/out"
expect_exit "symbolic size missing" 2 "$T" verify examples/symbolic_dim.py
expect_grep "symbolic size named" "give its size with -D m=N" "$D/err"
expect_exit "symbolic size given" 0 "$T" verify examples/symbolic_dim.py -D m=70
expect_exit "unknown --reference" 2 "$T" verify examples/softmax.py -D m=4 --reference gpu
expect_exit "--target does not apply" 2 "$T" verify examples/softmax.py -D m=4 --target cpu
expect_exit "--perturb of a non-output" 2 "$T" verify examples/softmax.py -D m=4 --perturb X
printf 'import tilelang.language as T\n@T.prim_func\ndef k(A: T.Tensor((4,), "float32")):\n    with T.Kernel(1) as bx:\n        A[0] = nope\n' >"$D/bad.py"
expect_exit "program error" 1 "$T" verify "$D/bad.py"
expect_grep "program error has file:line:col" "bad.py:5:" "$D/err"
expect_exit "--help" 0 "$T" verify --help
expect_grep "--help describes it" "every execution backend" "$D/out"

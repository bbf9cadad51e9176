#!/bin/sh
# `tilec tune` (tools/cli_tune.c) on the cpu target: every @autotune configuration compiled and
# timed, the fastest stored for the same options and used by `tilec run`; --config lines;
# --json; the errors a user meets. Sizes are small: the figures are not the point here.
T=${TILEC:-build/tilec}
D=$(mktemp -d /tmp/tilec-e2e-tune-XXXXXX)
trap 'rm -rf "$D"' EXIT
export TILEC_CACHE_DIR="$D/cache"
F=examples/autotune_gemm.py
S="-D M=64 -D N=64 -D K=64"
ok() { echo "PASS tune: $1"; }
bad() { echo "FAIL tune: $1"; head -n 12 "$D/out" "$D/err"; }
run() { "$@" >"$D/out" 2>"$D/err"; echo $? >"$D/rc"; }
rc() { cat "$D/rc"; }

# before any tuning, run takes the first configuration and says so
run "$T" run $F $S --verify
[ "$(rc)" = 0 ] && grep -q "note: @autotune lists 10 configurations; using the first (block_M=64 block_N=64 block_K=32 num_stages=2 threads=128)" "$D/err" &&
  grep -q "verify C: ok" "$D/out" && ok "run uses the first configuration before tuning" || bad "first configuration"

# tune: 8 rows, one best, stored
run "$T" tune $F $S --jobs 2
[ "$(rc)" = 0 ] && [ "$(grep -c '^[0-9][0-9]*  *block_M=' "$D/out")" = 10 ] && [ "$(grep -c '<- best' "$D/out")" = 1 ] &&
  grep -q "^best: .*; stored: 'tilec run' with the same options uses it" "$D/out" && ok "tune times 10 configurations and stores the best" || bad "tune table"
best=$(sed -n 's/^best: \(.*\) (median.*/\1/p' "$D/out")
[ "$(ls "$D/cache/tune" | wc -l)" = 1 ] && ok "one stored choice" || bad "stored choice files"

# run with the same options uses the stored choice; other sizes do not
run "$T" run $F $S
grep -q "note: using the configuration 'tilec tune' chose for these options: $best" "$D/err" && ok "run uses the stored choice" || bad "stored choice not used"
run "$T" run $F -D M=128 -D N=64 -D K=64
grep -q "using the first" "$D/err" && ok "another -D binding is another tuning" || bad "the key ignores -D"
# a tuned name bound on the command line turns the choice off
run "$T" run $F $S -D block_M=128 -D block_N=64 -D block_K=32 -D num_stages=3 -D threads=128
[ "$(rc)" = 0 ] && ! grep -q "note:" "$D/err" && ok "-D of a tuned name: no automatic choice" || bad "-D of a tuned name"

# a damaged stored choice is not used
for f in "$D"/cache/tune/*; do printf 'garbage\n' >"$f"; done
run "$T" run $F $S
[ "$(rc)" = 0 ] && grep -q "using the first" "$D/err" && ok "a damaged stored choice is ignored" || bad "damaged choice"

# --json: every configuration's times and the best
run "$T" tune $F $S --json
[ "$(rc)" = 0 ] && python3 -c "
import json, sys
d = json.load(open('$D/out'))
assert d['kernel'] == 'matmul' and len(d['configs']) == 10, d
assert all(c['ok'] and c['median_ms'] > 0 and c['compile_ms'] >= 0 for c in d['configs'])
assert d['best'] in [c['config'] for c in d['configs']] and d['stored'] is True
" 2>"$D/err" && ok "--json" || bad "--json"

# --config replaces @autotune's list; a configuration that cannot compile is reported, not chosen
run "$T" tune $F $S --config "block_M=64 block_N=64 block_K=32 num_stages=2 threads=128" --config "block_M=64 block_N=64 block_K=32 num_stages=2 threads=100000"
[ "$(rc)" = 0 ] && [ "$(grep -c '^[12]  *block_M=' "$D/out")" = 2 ] && grep -q "^2 .*threads=100000 .* - " "$D/out" &&
  grep -q "^best: block_M=64 block_N=64 block_K=32 num_stages=2 threads=128 " "$D/out" && ok "--config lines; a failing one is skipped" || bad "--config"

# errors
run "$T" tune examples/gemm.py
[ "$(rc)" = 2 ] && grep -q "nothing to tune: the kernel has no @autotune" "$D/err" && ok "nothing to tune" || bad "nothing to tune"
run "$T" tune $F $S -D block_M=64
[ "$(rc)" = 2 ] && grep -q "error: -D block_M fixes a name the configurations tune" "$D/err" && ok "-D of a tuned name in tune" || bad "-D tuned name"
run "$T" run $F --config "block_M=64"
[ "$(rc)" = 2 ] && grep -q "are options of 'tilec tune'" "$D/err" && ok "--config outside tune" || bad "--config outside tune"
run "$T" tune $F $S --config "block_M"
[ "$(rc)" = 2 ] && grep -q "is not NAME=VALUE" "$D/err" && ok "a malformed --config" || bad "malformed --config"

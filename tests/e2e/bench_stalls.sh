#!/bin/sh
# bench/ncu_stalls.py sums Nsight Compute's per-instruction warp-state samples (the source page of
# tests/gpu/profile.sh) by how often each instruction ran: on 40 rows of a real H100 profile of the
# 4096^3 GEMM (tests/e2e/data/ncu_stalls_sample.csv) it must print the k loop's share, the
# producer's wait and the tile boundary, and refuse a file that is not such an export.
D=$(mktemp -d)
pass=0 fail=0
ok() { echo "PASS bench_stalls: $1"; pass=$((pass + 1)); }
bad() { echo "FAIL bench_stalls: $1"; fail=$((fail + 1)); }
S=tests/e2e/data/ncu_stalls_sample.csv
python3 bench/ncu_stalls.py "$S" --top 2 >"$D/out" 2>"$D/err" || bad "exit status: $(cat "$D/err")"
grep -q '^14931 samples over 40 instructions; the one with the most ran 262144 times$' "$D/out" && ok "totals" || bad "totals: $(head -1 "$D/out")"
grep -q '^   90.6%  as often as the hottest (its loop): 37 instructions; barrier 43.9%, wait 14.6%, mio 10.9%$' "$D/out" &&
  ok "the k loop's share and stall reasons" || bad "loop class: $(sed -n 2p "$D/out")"
grep -q '^    2.2%  under 1/32 as often (per tile, set-up): 2 instructions; ' "$D/out" && ok "the tile boundary's share" ||
  bad "per-tile class: $(grep 'under 1/32' "$D/out")"
[ "$(grep -c '^ *[0-9.]*% *[0-9][0-9]* ' "$D/out")" = 2 ] && grep -q '44.2%     262144  WARPGROUP.DEPBAR.LE gsb0, 0x1 ' "$D/out" &&
  ok "the top instructions" || bad "top: $(tail -3 "$D/out")"
printf 'a,b\n1,2\n' >"$D/other.csv"
python3 bench/ncu_stalls.py "$D/other.csv" >/dev/null 2>"$D/err"; rc=$?
[ $rc = 1 ] && grep -q 'not an ncu --page source --csv export' "$D/err" && ok "another CSV is refused" || bad "other csv: rc $rc $(cat "$D/err")"
head -2 "$S" | sed 's/Warp Stall Sampling/Warp Stalls/g' >"$D/nosamples.csv"
python3 bench/ncu_stalls.py "$D/nosamples.csv" >/dev/null 2>"$D/err"; rc=$?
[ $rc = 1 ] && grep -q 'no warp stall samples' "$D/err" && ok "an export without samples is refused" || bad "no samples: rc $rc $(cat "$D/err")"
rm -rf "$D"
[ $fail = 0 ]

#!/bin/sh
# bench/plot.py reads the committed H200 logs (bench/results/) into its table and CSV: the
# figures docs/performance.md quotes, and a malformed or missing log is an error, not a plot.
D=$(mktemp -d)
pass=0 fail=0
ok() { echo "PASS bench_plot: $1"; pass=$((pass + 1)); }
bad() { echo "FAIL bench_plot: $1"; fail=$((fail + 1)); }
python3 bench/plot.py bench/results/h200-2026-12-04-*.log --csv "$D/h200.csv" >"$D/out" 2>"$D/err" || bad "exit status"
grep -q '^GEMM bf16 4096³ *788.1 *80%  cuBLAS 794 (0.99x); block_M=128 block_N=256 block_K=64 threads=256 num_stages=4$' "$D/out" &&
  ok "best tilec figure beside the cuBLAS median" || bad "GEMM row: $(head -3 "$D/out")"
grep -q '^attention fp16 causal *561.8 *57%  SDPA flash 325 (1.73x), cuDNN 575 (0.98x); example$' "$D/out" &&
  ok "attention beside SDPA flash and cuDNN" || bad "attention row: $(grep attention "$D/out")"
# fp8 against cuBLASLt (both accumulations), as a fraction of the fp8 dense peak (twice f16's)
grep -q '^GEMM float8_e4m3fn 8192³ *1519.3 *77%  cuBLASLt 1449 (1.05x), cuBLASLt fast acc. 1460 (1.04x); ' "$D/out" &&
  ok "fp8 beside cuBLASLt" || bad "fp8 row: $(grep float8 "$D/out")"
[ "$(wc -l <"$D/h200.csv")" = 37 ] && grep -q '^GEMM f16 8192³,cuBLAS,693.0,0.701,$' "$D/h200.csv" &&
  grep -q '^GEMM float8_e4m3fn 8192³,cuBLASLt,1449.1,0.733,$' "$D/h200.csv" &&
  ok "CSV" || bad "CSV: $(cat "$D/h200.csv")"
printf 'nothing here\n' >"$D/empty.log"
python3 bench/plot.py "$D/empty.log" >/dev/null 2>"$D/err"; rc=$?
[ $rc = 1 ] && grep -q 'no tilec figures' "$D/err" && ok "a log without figures is an error" || bad "empty log: rc $rc"
python3 bench/plot.py "$D/missing.log" >/dev/null 2>"$D/err"; rc=$?
[ $rc = 2 ] && grep -q 'missing.log' "$D/err" && ok "a missing log is an error" || bad "missing log: rc $rc"
rm -rf "$D"
[ $fail = 0 ]

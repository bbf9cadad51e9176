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
# bench/corpus_peer.py: the corpus read from regression_*.py files, and a table and plot from records
mkdir -p "$D/ex/gemm"
cat >"$D/ex/gemm/regression_example_gemm.py" <<'PY'
import tilelang.testing
import example_gemm


def regression_example_gemm():
    tilelang.testing.process_func(example_gemm.run_regression_perf)
    tilelang.testing.process_func(example_gemm.run_regression_perf, M=256, dtype="float16")
PY
python3 bench/corpus_peer.py --examples "$D/ex" --list >"$D/list" 2>"$D/err"
[ "$(cat "$D/list")" = "gemm/example_gemm run_regression_perf 
gemm/example_gemm run_regression_perf {'M': 256, 'dtype': 'float16'}" ] && ok "corpus_peer lists process_func entries" ||
  bad "corpus_peer --list: $(cat "$D/list" "$D/err")"
cat >"$D/corpus.jsonl" <<'J'
{"entry": "gemm/example_gemm", "kwargs": {}, "sizes": {"M": 1024}, "tilelang_ms": 0.02, "tilec_ms": 0.016, "ratio": 1.25, "agree": true, "compared": 3, "worst_rel_err": 0.001, "iters": 200, "disagree": []}
{"entry": "flash_decoding/example_gqa_decode", "kwargs": {}, "tilelang_ms": 0.035, "tilec_ms": 0.07, "ratio": 0.5, "agree": true, "compared": 2, "worst_rel_err": 0.002, "iters": 200, "disagree": []}
{"entry": "cast/example_cast", "kwargs": {}, "tilelang_ms": 0.01, "tilec_ms": 0.01, "ratio": 1.0, "agree": false, "compared": 1, "worst_rel_err": 0.5, "iters": 30, "disagree": ["return (0.5)"]}
{"entry": "gemm/example_gemm_intrinsics", "kwargs": {}, "tilec_error": "CompatError: tilelang.tvm is not provided"}
J
python3 bench/corpus_peer.py --report "$D/corpus.jsonl" >"$D/table" 2>"$D/err"
grep -q '^4 entries: 1 DISAGREE, 2 agree, 1 tilec failed; geometric mean TileLang/tilec over the 2 agreeing: 0.791; below 0.95: 1$' "$D/table" &&
  grep -q '^| flash_decoding/example_gqa_decode |  | 0.0350 | 0.0700 | 0.50 | agree |' "$D/table" &&
  grep -q '^| cast/example_cast | .* | DISAGREE | differ: return (0.5) |$' "$D/table" &&
  grep -q '^| gemm/example_gemm_intrinsics | .* | tilec failed | CompatError: tilelang.tvm is not provided |$' "$D/table" &&
  grep -q '<svg' "$D/corpus.svg" && grep -q '0.50</text>' "$D/corpus.svg" &&
  ok "corpus_peer table (geometric mean over agreeing entries, disagreements and failures listed) and plot" ||
  bad "corpus_peer --report: $(cat "$D/table" "$D/err")"
rm -rf "$D"
[ $fail = 0 ]

#!/bin/sh
# Scheduling data kept as typed IR fields (layouts, T.Pipelined's order/stage/group, T.vectorized,
# copy and gemm hints, T.use_swizzle): `tilec ir` shows them, `tilec run --verify` gives the same
# results as without them, and the verifier rejects broken layouts and schedules.
T=${TILEC:-build/tilec}
D=$(mktemp -d /tmp/tilec-e2e-sched-XXXXXX)
trap 'rm -rf "$D"' EXIT
export TILEC_CACHE_DIR="$D/cache"
K=tests/e2e/data/schedule_fields.py
check() { # name command...: PASS when the command succeeds
  name=$1
  shift
  if "$@" >"$D/out" 2>"$D/err"; then echo "PASS sched: $name"; else echo "FAIL sched: $name"; head -n 6 "$D/err"; fi
}
has() { # name text: the last output holds the text
  if grep -qF -- "$2" "$D/out"; then echo "PASS sched: $1"; else echo "FAIL sched: $1: no '$2' in"; head -n 20 "$D/out"; fi
}
rejects() { # name message sed-edit: the edited kernel fails with the message
  sed -e "$3" "$K" >"$D/bad.py"
  "$T" ir "$D/bad.py" >/dev/null 2>"$D/err"
  rc=$?
  if [ $rc -ne 0 ] && grep -qF -- "$2" "$D/err"; then echo "PASS sched: rejects $1"; else echo "FAIL sched: rejects $1 (exit $rc)"; head -n 4 "$D/err"; fi
}

check "ir" "$T" ir "$K"
has "swizzle layout" "A_shared = alloc shared float16[32, 16] layout=swizzle{(i0, i1) -> offset: i0 * 16 + ((i1 // 8 ^ i0 >> 2 & 1) * 8 + i1 % 8); storage: 512}"
has "padded T.Layout" "layout=annotated{(i, j) -> offset: i * 40 + j; storage: 632}"
has "T.Fragment" "layout=annotated{(i, j) -> thread: i % 16 * 8 + j % 8, reg: i // 16 * 4 + j // 8; regs: 8}"
has "use_swizzle" 'use_swizzle(panel_size=4, order="column")'
has "pipeline arguments" "for k in pipelined(0, 4, stages=2, order=[0, 1, 2], stage=[0, 0, 1], group=[[0, 1], [2]]):"
has "copy hints" "A_shared, coalesced_width=4, disable_tma=True)"
has "eviction policy" 'B_shared, eviction_policy="evict_first")'
has "gemm wg_wait" "T.gemm(A_shared, B_shared, C_local, wg_wait=1)"
has "vectorized loop" "for j in vectorized(0, 32):"
check "runs and verifies on cpu" "$T" run "$K" --verify
check "ragged shape verifies" "$T" run "$K" -D M=50 -D N=40 -D K=40 --verify

rejects "a fragment layout mapping two elements to one register" "layout of 'C_local' maps two elements to thread 0, register 0" \
  's|forward_index_fn=lambda i, j: (i // 16) \* 4 + j // 8|forward_index_fn=lambda i, j: (i // 16) * 4|'
rejects "a fragment layout using threads the block lacks" "outside the block's 128 threads" \
  's|forward_thread_fn=lambda i, j: (i % 16) \* 8 + j % 8|forward_thread_fn=lambda i, j: (i % 16) * 9 + j % 8|'
rejects "an overlapping shared layout" "has storage for 272 elements, fewer than the 512 the buffer holds" \
  's|i \* (block_N + 8) + j|i * 16 + j|'
rejects "order of the wrong length" "order/stage have 2 entries, fewer than the 3 statements of the loop body" \
  's|order=\[0, 1, 2\], stage=\[0, 0, 1\]|order=[1, 0], stage=[0, 1]|'
rejects "order that is not a permutation" "order lists 1 twice" 's|order=\[0, 1, 2\]|order=[0, 1, 1]|'
rejects "order and stage of different lengths" "order has 3 entries but stage has 2" 's|stage=\[0, 0, 1\]|stage=[0, 1]|'
rejects "a layout on a local buffer" "'C_local' is a local buffer; layouts are for global, shared and fragment buffers" \
  's|C_local = T.alloc_fragment|C_local = T.alloc_local|'
rejects "a T.Layout on a fragment" "its layout must be a T.Fragment" \
  's|C_local: T.Fragment((block_M, block_N), forward_thread_fn=|C_local: T.Layout((block_M, block_N), |; s|^ *forward_index_fn=lambda i, j: (i // 16) \* 4 + j // 8),|),|'
rejects "a bad eviction policy" "eviction_policy must be" 's|evict_first|evict_sometimes|'

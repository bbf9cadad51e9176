#!/bin/sh
# pass_configs TL_DISABLE_THREAD_STORAGE_SYNC on every target (tests/e2e/data/storage_sync_race.py):
# with it, the program's own T.sync_threads() are the only barriers for its shared tiles; a kernel
# that has the one it needs verifies everywhere, and the same kernel without it (a planted race) is
# a wrong result on the cpu and on the cuda and metal emulators in both thread orders. Once, cuda
# and metal placed the barrier anyway. Without the config tilec places it (and the kernel
# verifies); --explain says when it places none. The config given as a conditional expression was
# once dropped without a word (the file writes it that way).
T=${TILEC:-build/tilec}
F=tests/e2e/data/storage_sync_race.py
if ! command -v "${TILEC_EMU_CXX:-c++}" >/dev/null 2>&1; then
  echo "SKIP storage_sync: no C++ compiler (${TILEC_EMU_CXX:-c++}): the emulators cannot run"; exit 0
fi
D=$(mktemp -d); trap 'rm -rf "$D"' EXIT
sed 's/^AUTO = False/AUTO = True/' "$F" >"$D/auto.py"
run() { # name order file target args...
  name=$1 ord=$2 file=$3 tgt=$4; shift 4
  case "$tgt" in
    cpu) TILEC_EMU_ORDER=$ord "$T" run "$file" "$@" --target cpu --verify >"$D/out" 2>&1 ;;
    *) TILEC_EMU_ORDER=$ord "$T" run "$file" "$@" --target "$tgt" --backend emu --verify >"$D/out" 2>&1 ;;
  esac
}
expect_ok() {
  if run "$@"; then echo "PASS storage_sync $1 $2 $4"
  else echo "FAIL storage_sync $1 $2 $4: does not verify"; tail -n 3 "$D/out"; fi
}
expect_wrong() {
  run "$@"; rc=$?
  if [ $rc -ne 0 ] && grep -q "verification failed" "$D/out"; then echo "PASS storage_sync $1 $2 $4: the race is a wrong result"
  else echo "FAIL storage_sync $1 $2 $4: the planted race was not reported (exit $rc)"; tail -n 3 "$D/out"; fi
}
for spec in cpu:forward cuda,arch=sm_80:forward cuda,arch=sm_80:reverse cuda,arch=sm_90a:forward \
            cuda,arch=sm_90a:reverse metal:forward metal:reverse metal,metal4=1:reverse; do
  tgt=${spec%:*} ord=${spec##*:}
  expect_ok "program's barrier" "$ord" "$F" "$tgt" -D sync=1
  expect_wrong "barrier left out" "$ord" "$F" "$tgt" -D sync=0
  expect_ok "config off, tilec's barrier" "$ord" "$D/auto.py" "$tgt" -D sync=0
done
# the generated code: no barrier with the config, one without; --explain says which
for tgt in cuda metal; do
  n=$("$T" source "$F" -D sync=0 --target $tgt --kernel-only 2>&1 | grep -c "__syncthreads\|threadgroup_barrier")
  m=$("$T" source "$D/auto.py" -D sync=0 --target $tgt --kernel-only 2>&1 | grep -c "__syncthreads\|threadgroup_barrier")
  if [ "$n" = 0 ] && [ "$m" = 1 ]; then echo "PASS storage_sync $tgt source: no barrier with the config, one without"
  else echo "FAIL storage_sync $tgt source: $n barrier lines with the config, $m without"; fi
  if "$T" source "$F" -D sync=0 --target $tgt --explain 2>&1 | grep -q "^// barriers: pass_configs tl.disable_thread_storage_sync" &&
     ! "$T" source "$D/auto.py" -D sync=0 --target $tgt --explain 2>&1 | grep -q "barriers: pass_configs"; then
    echo "PASS storage_sync $tgt --explain names the config"
  else echo "FAIL storage_sync $tgt --explain does not name the config"; fi
done
# TileLang's own pattern (deepseek_v32/topk_selector.py's ping-pong rows) on the GPU targets
for tgt in cuda,arch=sm_90a metal; do
  expect_ok "ping-pong rows" forward tests/e2e/data/compat/storage_sync_off.py "$tgt" -D N=256
done

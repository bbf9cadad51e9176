#!/bin/sh
# The program generator (`tilec fuzz`, tools/fuzz_gen.c) on a fixed-seed batch: random TileLang
# programs on the cpu, the cuda emulator (sm_80, sm_90a, sm_90a with the threads resumed in
# reverse) and metal's (Metal 3 and 4), each output compared with the reference interpreter.
# A finding prints FAIL with its seed and the minimized reproducer (kept under $FUZZ_OUT when set).
# Then every minimized finding kept in tests/fuzz/regressions/ runs again as `tilec run --verify`
# on the target its `# tilec-test:` line names. docs/testing.md has the longer runs.
T=${TILEC:-build/tilec}
case "${TILEC_BUILD:-build}" in *asan*|*tsan*) count=${FUZZ_COUNT_SAN:-6} ;; *) count=${FUZZ_COUNT:-120} ;; esac
if ! command -v "${TILEC_EMU_CXX:-c++}" >/dev/null 2>&1; then
  echo "SKIP progfuzz: no C++ compiler (${TILEC_EMU_CXX:-c++}): the emulators cannot run"; exit 0
fi
D=$(mktemp -d /tmp/tilec-progfuzz-XXXXXX)
trap 'rm -rf "$D"' EXIT
targets="cpu cuda,arch=sm_80:emu cuda,arch=sm_90a:emu cuda,arch=sm_90a:emu:reverse metal metal,metal4=1"
"$T" fuzz --seed "${FUZZ_SEED:-1}" --count "$count" --jobs "${FUZZ_JOBS:-2}" --targets "$targets" --out "${FUZZ_OUT:-$D/found}" \
  --verbose >"$D/log" 2>&1
rc=$?
grep -E '^(PASS|FAIL)' "$D/log"
grep -v -E '^(PASS|FAIL|  seed)' "$D/log" | sed 's/^/  /'
if [ $rc -ne 0 ] && [ $rc -ne 3 ]; then echo "FAIL progfuzz: tilec fuzz exited with status $rc"; fi
n=$(grep -c '^PASS' "$D/log")
[ "$n" -ge $((count * 9 / 10)) ] || echo "FAIL progfuzz: only $n of $count programs agreed everywhere"
# the regressions: `# tilec-test: [ENV=VALUE] TARGET [--backend B] --kernel K --seed S`
for f in tests/fuzz/regressions/*.py; do
  [ -f "$f" ] || continue
  line=$(sed -n 's/^# tilec-test: *//p' "$f" | head -n 1)
  # leading NAME=VALUE words (upper-case names) are the environment; then the target
  envs=; while :; do w=${line%% *}; case "$w" in [A-Z_]*=*) envs="$envs $w"; line=${line#* } ;; *) break ;; esac; done
  tgt=${line%% *}; rest=${line#"$tgt"}
  # shellcheck disable=SC2086
  if out=$(env $envs "$T" run "$f" --target "$tgt" $rest --verify 2>&1); then echo "PASS progfuzz regression $f"
  else echo "FAIL progfuzz regression $f ($envs $tgt$rest)"; echo "$out" | tail -n 4; fi
done

#!/bin/sh
# The Metal runtime without a Mac (docs/metal-runtime.md): backend `metal` drives the simulated
# Metal device through the same function table Metal.framework fills on macOS; the device runs
# the kernels on the emulator. Every line of tests/e2e/examples.list (under a sanitizer build:
# every example file) runs with --verify (against
# the cpu backend) in both storage modes: private (the default: blits) and shared (the
# environment variable, and the target option, which wins over it). Then: the fault mode (stale
# private data after N dispatches) is caught by --verify and shared storage avoids it; storage
# mode errors; `tilec backends` (and --json) reports the storage mode and where it came from; the
# Metal 4 guard for OS / SDK / GPU family answers; --bench times with GPU timestamps.
T=${TILEC:-build/tilec}
if ! command -v "${TILEC_EMU_CXX:-c++}" >/dev/null 2>&1; then
  echo "metal runtime: no C++ compiler (${TILEC_EMU_CXX:-c++}): the simulated device cannot run kernels, nothing checked"
  exit 0
fi
J=$(nproc 2>/dev/null || echo 2)
unset TILEC_METAL_STORAGE_MODE TILEC_METAL_SIM_OS TILEC_METAL_SIM_SDK TILEC_METAL_SIM_FAMILIES TILEC_METAL_SIM_FAULT

# $1 tilec, $2 mode (private: the default, env: TILEC_METAL_STORAGE_MODE=shared, opt: the target
# option storage_mode=shared with the environment saying private), $3 the examples.list line.
case_sh='
T=$1; mode=$2; line=$3
file=${line%% *}; args=${line#"$file"}
[ "$file" = gemm_transposed.py ] && args="$args -D block_M=64 -D block_N=64"
tgt=metal; want=private
case $mode in
  env) export TILEC_METAL_STORAGE_MODE=shared; want=shared ;;
  opt) export TILEC_METAL_STORAGE_MODE=private; tgt=metal,storage_mode=shared; want=shared ;;
esac
# shellcheck disable=SC2086
out=$(timeout 300 "$T" run "examples/$file" $args --target "$tgt" --backend metal --verify 2>&1); rc=$?
if [ $rc -eq 0 ] && echo "$out" | grep -q "^metal storage mode $want "; then printf "PASS metal runtime %s %s\n" "$mode" "$line"
else printf "FAIL metal runtime %s %s (exit %s)\n%s\n" "$mode" "$line" "$rc" "$(echo "$out" | tail -n 8 | sed "s/^/    /")"; fi'
# gemm_fp8.py: an fp8 T.gemm has no Metal matrix path (tests/e2e/examples.list)
# and the attention lines sized for an H200's shared memory (more than Metal's 32 KB)
lines=$(grep -v -e '^#' -e '^$' -e '^gemm_fp8\.py' -e 'block_M=128 -D block_N=128 -D threads=256' -e 'block_N=256 -D block_K=64 -D threads=256' tests/e2e/examples.list | sed 's/[[:space:]]*$//')
# Under the sanitizers (run.sh's other build folders) the emulator is several times slower: there
# the first line of each example file runs, in both modes; the plain build runs every line.
case ${TILEC_BUILD:-build} in
  build) ;;
  *) lines=$(echo "$lines" | awk '!seen[$1]++') ;;
esac
echo "$lines" | xargs -P "$J" -d '\n' -I{} sh -c "$case_sh" _ "$T" private {}
echo "$lines" | xargs -P "$J" -d '\n' -I{} sh -c "$case_sh" _ "$T" env {}
# the target option on a few (it is the same code path as the environment after resolution)
printf '%s\n' "gemm.py -D M=200 -D N=136 -D K=96" "softmax.py -D m=37 -D N=300" "symbolic_dim.py -D m=200" |
  xargs -P "$J" -d '\n' -I{} sh -c "$case_sh" _ "$T" opt {}

check() { # NAME, then the condition's exit status
  if [ "$2" -eq 0 ]; then echo "PASS metal runtime $1"; else echo "FAIL metal runtime $1"; fi
}

# ---- the fault mode: stale private data after 0 chained dispatches (the inputs' upload blits and
# the dispatch share one command buffer, so the dispatch reads the buffers' starting bytes)
for ex in "gemm.py -D M=64 -D N=64 -D K=64" "softmax.py -D m=37" "rms_norm.py -D M=33 -D N=96"; do
  # shellcheck disable=SC2086
  out=$(TILEC_METAL_SIM_FAULT=0 "$T" run examples/$ex --target metal --backend metal --verify 2>&1)
  [ $? -eq 3 ] && echo "$out" | grep -q "verification failed"; check "fault mode caught by --verify (exit 3): $ex" $?
  # shellcheck disable=SC2086
  TILEC_METAL_SIM_FAULT=0 "$T" run examples/$ex --target metal,storage_mode=shared --backend metal --verify >/dev/null 2>&1
  check "fault mode: shared storage avoids it: $ex" $?
  # shellcheck disable=SC2086
  TILEC_METAL_SIM_FAULT=0 TILEC_METAL_STORAGE_MODE=shared "$T" run examples/$ex --target metal --backend metal --verify >/dev/null 2>&1
  check "fault mode: TILEC_METAL_STORAGE_MODE=shared avoids it: $ex" $?
done
# fault after 1 dispatch: a single dispatch is still right
TILEC_METAL_SIM_FAULT=1 "$T" run examples/softmax.py -D m=37 --target metal --backend metal --verify >/dev/null 2>&1
check "fault after 1 dispatch leaves a single dispatch right" $?

# ---- storage mode errors and reports
out=$("$T" run examples/softmax.py -D m=4 --target metal,storage_mode=managed --backend metal 2>&1)
[ $? -eq 2 ] && echo "$out" | grep -q "storage_mode=managed: expected storage_mode=private or storage_mode=shared"
check "unknown storage_mode option is a usage error" $?
out=$(TILEC_METAL_STORAGE_MODE=Shared "$T" run examples/softmax.py -D m=4 --target metal --backend metal 2>&1)
[ $? -eq 2 ] && echo "$out" | grep -q "TILEC_METAL_STORAGE_MODE='Shared' is not a storage mode (private, shared)"
check "unknown TILEC_METAL_STORAGE_MODE is a usage error" $?
TILEC_METAL_STORAGE_MODE=Shared "$T" run examples/softmax.py -D m=4 --target metal,storage_mode=shared --backend metal >/dev/null 2>&1
check "the option wins over a bad environment value" $?

b=$("$T" backends)
echo "$b" | grep -q '^metal   metal     no       yes' && echo "$b" | grep -q '^metal/metal storage_mode: private$' &&
  echo "$b" | grep -q '^metal/metal storage_mode_source: default$' && echo "$b" | grep -q '^metal/metal device: simulated Metal device'
check "tilec backends: metal available (simulated), private by default" $?
b=$(TILEC_METAL_STORAGE_MODE=shared "$T" backends)
echo "$b" | grep -q '^metal/metal storage_mode: shared$' && echo "$b" | grep -q '^metal/metal storage_mode_source: TILEC_METAL_STORAGE_MODE$'
check "tilec backends: the environment, named as the source" $?
b=$(TILEC_METAL_STORAGE_MODE=shared "$T" backends --target metal,storage_mode=private)
echo "$b" | grep -q '^metal/metal storage_mode: private$' && echo "$b" | grep -q '^metal/metal storage_mode_source: target option storage_mode$'
check "tilec backends --target: the option wins, named as the source" $?
j=$(TILEC_METAL_STORAGE_MODE=shared "$T" backends --json)
if command -v python3 >/dev/null 2>&1; then
  echo "$j" | python3 -c '
import json, sys
d = {(b["target"], b["backend"]): b for b in json.load(sys.stdin)["backends"]}
m = d[("metal", "metal")]
assert m["available"] and m["storage_mode"] == "shared" and m["storage_mode_source"] == "TILEC_METAL_STORAGE_MODE", m
assert m["disk_cache"] is False and d[("metal", "metallib")]["disk_cache"] is True
assert d[("metal", "metallib")]["available"] is False and "macOS" in d[("metal", "metallib")]["reason"]
assert m["msl"] == "3.2"'
  check "tilec backends --json: storage mode, source, disk cache by property" $?
else
  echo "$j" | grep -q '"storage_mode": "shared", "storage_mode_source": "TILEC_METAL_STORAGE_MODE"'
  check "tilec backends --json: storage mode and source" $?
fi
out=$("$T" backends --target metal,storage_mode=x 2>&1)
[ $? -eq 2 ] && echo "$out" | grep -q 'storage_mode=x'; check "tilec backends --target with a bad option" $?
j=$("$T" run examples/softmax.py -D m=4 --target metal --backend metal --json)
echo "$j" | grep -q '"storage_mode": "private", "storage_mode_source": "default"'; check "tilec run --json: the storage mode" $?

# ---- the Metal 4 guard
out=$("$T" run examples/gemm.py -D M=64 -D N=64 -D K=64 --target metal,metal4=1 --backend metal --verify 2>&1)
[ $? -eq 4 ] && echo "$out" | grep -q "needs Metal 4.0 .*compiles Metal 3.2 at most (Metal 3.2: no Metal 4 because the SDK is 15.0"
check "a metal4 kernel without Metal 4 (SDK 15): a clear error" $?
out=$(TILEC_METAL_SIM_SDK=26.0 TILEC_METAL_SIM_OS=26.1 "$T" run examples/gemm.py -D M=64 -D N=64 -D K=64 --target metal,metal4=1 --backend metal 2>&1)
[ $? -eq 4 ] && echo "$out" | grep -q "the GPU is not of family Metal4"; check "OS and SDK 26 but no Metal4 family: refused" $?
out=$(TILEC_METAL_SIM_SDK=26.0 TILEC_METAL_SIM_OS=15.6 TILEC_METAL_SIM_FAMILIES=apple9,metal3,metal4 "$T" run examples/gemm.py -D M=64 -D N=64 -D K=64 --target metal,metal4=1 --backend metal 2>&1)
[ $? -eq 4 ] && echo "$out" | grep -q "macOS is 15.6 (Metal 4 needs 26)"; check "SDK 26 and family Metal4 on macOS 15: refused" $?
TILEC_METAL_SIM_SDK=26.0 TILEC_METAL_SIM_OS=26.1 TILEC_METAL_SIM_FAMILIES=apple9,metal3,metal4 "$T" run examples/gemm.py -D M=64 -D N=64 -D K=64 --target metal,metal4=1 --backend metal --verify >/dev/null 2>&1
check "all three allow Metal 4: the metal4 kernel runs and verifies" $?
b=$(TILEC_METAL_SIM_SDK=26.0 TILEC_METAL_SIM_OS=26.1 TILEC_METAL_SIM_FAMILIES=apple9,metal3,metal4 "$T" backends)
echo "$b" | grep -q '^metal/metal msl: 4.0$'; check "tilec backends: MSL 4.0 when all three allow it" $?
out=$(TILEC_METAL_SIM_OS=13.5 "$T" run examples/softmax.py -D m=4 --target metal --backend metal 2>&1)
[ $? -eq 4 ] && echo "$out" | grep -q "needs Metal 3.1, but this machine compiles Metal 3.0 at most"
check "macOS 13: an MSL 3.1 kernel is refused" $?
TILEC_METAL_SIM_OS=13.5 "$T" run examples/softmax.py -D m=4 --target metal,msl=3.0 --backend metal --verify >/dev/null 2>&1
check "macOS 13: the same kernel for msl=3.0 runs" $?
out=$(TILEC_METAL_SIM_OS=fifteen "$T" backends 2>&1)
echo "$out" | grep -q "^metal   metal     no       no         TILEC_METAL_SIM_OS='fifteen' is not a version"
check "a malformed simulator setting makes the backend unavailable, with the reason" $?
out=$(TILEC_METAL_SIM_DEVICE=0 "$T" run examples/softmax.py -D m=4 --target metal --backend metal 2>&1)
[ $? -eq 4 ] && echo "$out" | grep -q "no Metal device"; check "no device: exit 4 with the reason" $?

# ---- source and compile with the in-memory backend
"$T" source examples/softmax.py -D m=4 --target metal --backend metal --kernel-only | grep -q '^\[\[kernel'
check "tilec source --backend metal prints the MSL" $?
out=$("$T" compile examples/softmax.py -D m=4 --target metal --backend metal -o "${TMPDIR:-/tmp}/tilec-mrt-$$.bin" 2>&1)
[ $? -eq 4 ] && echo "$out" | grep -q "backend 'metal' of target 'metal' builds no artifact: it compiles in process"
check "tilec compile --backend metal: no artifact, said plainly" $?
rm -f "${TMPDIR:-/tmp}/tilec-mrt-$$.bin"

# ---- timing with GPU timestamps
out=$("$T" run examples/softmax.py -D m=8 --target metal --backend metal --bench 2>&1)
[ $? -eq 0 ] && echo "$out" | grep -q "GPU timestamps of the command buffer"; check "--bench times with GPU timestamps" $?

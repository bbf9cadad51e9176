#!/bin/sh
# The command line's rough edges a fresh user met (issue 37, items 3 and 5): --name=VALUE options,
# one error prefix with the table first, --timeout, tune without a device and tuned choices under
# "auto", --load's shapes and Fortran-order files, the emulators' timing and storage-mode notes,
# build directories a SIGKILL leaves, and a damaged entry in a read-only cache.
T=${TILEC:-build/tilec}
D=$(mktemp -d /tmp/tilec-e2e-edges-XXXXXX)
trap 'rm -rf "$D"' EXIT
export TILEC_CACHE_DIR="$D/cache"
pass() { echo "PASS cli_rough_edges: $1"; }
fail() { echo "FAIL cli_rough_edges: $1"; }
expect() { # name expected-exit expected-pattern-in-stdout-or-stderr command...
  name=$1 want=$2 pat=$3
  shift 3
  "$@" >"$D/out" 2>"$D/err"
  got=$?
  if [ "$got" != "$want" ]; then fail "$name: exit $got, expected $want"; head -n 8 "$D/out" "$D/err"; return; fi
  if [ -n "$pat" ] && ! grep -q -- "$pat" "$D/out" "$D/err"; then
    fail "$name: no '$pat' in"; head -n 8 "$D/out" "$D/err"; return
  fi
  pass "$name"
}

# --name=VALUE for every option that takes a value; a flag given a value is refused
expect "--target=cuda,arch=... --kernel-only" 0 "__global__" \
  "$T" source examples/gemm.py --target=cuda,arch=sm_90a --kernel-only
expect "--seed=3 --kernel=... -D..." 0 "verify Y: ok" \
  "$T" run examples/softmax.py --kernel=softmax -Dm=50 --seed=3 --verify
expect "--verify=yes is refused" 2 "option '--verify' takes no value" "$T" run examples/softmax.py --verify=yes
expect "--fast=1 is an unknown option" 2 "unknown option '--fast=1'" "$T" run examples/softmax.py --fast=1

# one prefix; where both streams share a pipe the table comes before the error that sums it up
"$T" ir examples/gemm.py --kernel nope >/dev/null 2>"$D/err"
if head -n 1 "$D/err" | grep -q "^tilec: error: program has no kernel named 'nope'"; then
  pass "an unlocated error starts with 'tilec: error:'"
else fail "an unlocated error starts with 'tilec: error:'"; cat "$D/err"; fi
"$T" run examples/softmax.py -D m=50 --verify --perturb Y >"$D/both" 2>&1
table=$(grep -n "^verify Y: FAILED" "$D/both" | cut -d: -f1)
error=$(grep -n "^tilec: error: verification failed" "$D/both" | cut -d: -f1)
if [ -n "$table" ] && [ -n "$error" ] && [ "$table" -lt "$error" ]; then
  pass "the table comes before its error in one pipe"
else fail "the table comes before its error in one pipe"; cat "$D/both"; fi

# --timeout: the run that never ends stops, named at its loop; only run, verify and tune take it
cat >"$D/spin.py" <<'PY'
import tilelang
import tilelang.language as T


@tilelang.jit
def spin(N=32):
    @T.prim_func
    def main(A: T.Tensor((N,), "int32"), B: T.Tensor((N,), "int32")):
        with T.Kernel(1, threads=N) as bx:
            n = T.alloc_var("int32")
            n = 0
            while A[0] < 1000:
                n = n + 1
            B[0] = n

    return main
PY
expect "--timeout stops a run on the metal emulator" 4 \
  "spin.py:12:13: error: kernel 'spin' did not finish within 1 s on metal/emu" \
  "$T" run "$D/spin.py" --target metal --timeout 1
expect "--timeout stops the reference of tilec verify" 4 \
  "spin.py:12:13: error: reference interpreter stopped after 1 s" \
  "$T" verify "$D/spin.py" --timeout=1
expect "--timeout outside run, verify and tune" 2 "--timeout is an option of 'tilec run', 'verify' and 'tune'" \
  "$T" ir "$D/spin.py" --timeout 1
expect "--timeout needs seconds" 2 "--timeout needs a number of seconds above 0, got 'soon'" \
  "$T" run "$D/spin.py" --timeout soon

# tune: a target that cannot run here is said once, before any configuration is tried
if "$T" backends | grep -q '^cuda  *nvrtc  *yes  *no '; then
  "$T" tune examples/autotune_gemm.py --target cuda >"$D/out" 2>"$D/err"
  rc=$?
  if [ "$rc" = 4 ] && [ "$(grep -c "not available" "$D/err")" = 1 ] && [ ! -s "$D/out" ]; then
    pass "tune --target cuda without a GPU: exit 4, one reason, no table"
  else
    fail "tune --target cuda without a GPU: exit $rc"; head -n 5 "$D/out" "$D/err"
  fi
fi
# a choice tuned with --target cpu is the one `tilec run` takes when "auto" resolves to cpu
S="-D M=64 -D N=64 -D K=64"
"$T" tune examples/autotune_gemm.py $S --target cpu --jobs 2 \
  --config "block_M=64 block_N=64 block_K=32 num_stages=2 threads=128" \
  --config "block_M=32 block_N=32 block_K=32 num_stages=2 threads=128" >"$D/out" 2>"$D/err"
best=$(sed -n 's/^best: \(.*\) (median.*/\1/p' "$D/out")
expect "run under auto uses the choice tuned with --target cpu" 0 "chose for these options: $best" \
  "$T" run examples/autotune_gemm.py $S
expect "run --target cpu --backend cc uses it too" 0 "chose for these options: $best" \
  "$T" run examples/autotune_gemm.py $S --target cpu --backend cc

# --load: a shape mismatch names both shapes; Fortran-order files are read in C order
cat >"$D/addone.py" <<'PY'
import tilelang
import tilelang.language as T


@tilelang.jit
def addone(M=2, N=3, K=4):
    @T.prim_func
    def main(A: T.Tensor((M, N, K), "float32"), B: T.Tensor((M, N, K), "float32")):
        with T.Kernel(1, threads=32) as bx:
            for i, j, k in T.Parallel(M, N, K):
                B[i, j, k] = A[i, j, k] + 1.0

    return main
PY
mkdir -p "$D/in" "$D/bad" "$D/saved"
python3 - "$D" <<'PY'
import struct, sys
d = sys.argv[1]
def npy(path, shape, values, fortran):
    dims = ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "")
    hdr = "{'descr': '<f4', 'fortran_order': %s, 'shape': (%s), }" % (fortran, dims)
    hdr += " " * (63 - (10 + len(hdr)) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(hdr)) + hdr.encode())
        f.write(struct.pack("<%df" % len(values), *values))
M, N, K = 2, 3, 4
c = [float(i * 100 + j * 10 + k) for i in range(M) for j in range(N) for k in range(K)]
f = [float(i * 100 + j * 10 + k) for k in range(K) for j in range(N) for i in range(M)]  # first index fastest
npy(d + "/in/A.npy", (M, N, K), f, "True")
npy(d + "/bad/A.npy", (3, 2, 4), c, "False")
open(d + "/expected.txt", "w").write(" ".join("%g" % (v + 1) for v in c))
PY
expect "--load of a Fortran-order file" 0 "verify B: ok" \
  "$T" run "$D/addone.py" --load "$D/in" --save "$D/saved" --verify
python3 - "$D" <<'PY' >"$D/got.txt"
import struct, sys
raw = open(sys.argv[1] + "/saved/B.npy", "rb").read()
n = struct.unpack("<H", raw[8:10])[0]
vals = struct.unpack("<24f", raw[10 + n:])
print(" ".join("%g" % v for v in vals), end="")
PY
if cmp -s "$D/got.txt" "$D/expected.txt"; then pass "a Fortran-order input arrives in C order"
else fail "a Fortran-order input arrives in C order"; cat "$D/got.txt"; echo; cat "$D/expected.txt"; echo; fi
msg="bad/A.npy: the file holds dtype '<f4' and shape (3, 2, 4), "
msg="${msg}but parameter 'A' needs dtype '<f4' (float32) and shape (2, 3, 4)$"
expect "--load shape mismatch names both shapes" 2 "$msg" "$T" run "$D/addone.py" --load "$D/bad"

# the emulators: a timing says it means nothing for the GPU; storage_mode is said to be ignored
expect "--bench on the metal emulator says its timings mean nothing" 0 "timed on the emulator, on this machine's CPU" \
  "$T" run "$D/addone.py" --target metal,storage_mode=shared --bench
expect "storage_mode on the metal emulator is said to be ignored" 0 \
  "tilec: note: storage_mode=shared is ignored on the metal emulator (backend emu)" \
  "$T" run "$D/addone.py" --target metal,storage_mode=shared

# a build killed with SIGKILL leaves its tilec-cc-* directory; the next build removes it
mkdir -p "$D/tmp"
printf '#!/bin/sh\nexec sleep 30\n' >"$D/slowcc"
chmod +x "$D/slowcc"
TMPDIR="$D/tmp" CC="$D/slowcc" TILEC_DISABLE_CACHE=1 "$T" run "$D/addone.py" -D M=3 >/dev/null 2>&1 &
pid=$!
for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
  [ -n "$(ls "$D/tmp")" ] && break
  sleep 0.5
done
compiler=$(pgrep -P "$pid" 2>/dev/null) # the stand-in compiler tilec is waiting on
kill -9 "$pid" $compiler 2>/dev/null
wait "$pid" 2>/dev/null
left=$(ls "$D/tmp")
TMPDIR="$D/tmp" TILEC_DISABLE_CACHE=1 "$T" run "$D/addone.py" -D M=3 >/dev/null 2>&1
if [ -n "$left" ] && [ -z "$(ls "$D/tmp")" ]; then pass "the next build removes a killed build's directory ($left)"
else fail "the next build removes a killed build's directory"; echo "left: $left; now: $(ls "$D/tmp")"; fi

# a damaged entry in a read-only cache: the warning says it is still there, not that it was removed
ro="$D/rocache"
mkdir -p "$ro" && chmod 700 "$ro"
TILEC_CACHE_DIR="$ro" "$T" run "$D/addone.py" >/dev/null 2>&1
for f in $(find "$ro" -type f -name '*.tce'); do
  printf '\377\377\377\377' | dd of="$f" bs=1 seek=200 conv=notrunc 2>/dev/null
done
echo "TILEC_CACHE_DIR='$ro' '$T' run '$D/addone.py'" >"$D/ro.sh"
if [ "$(id -u)" = 0 ]; then
  unshare -m sh -c "mount --bind '$ro' '$ro' && mount -o remount,bind,ro '$ro' && sh '$D/ro.sh'" >"$D/ro.txt" 2>&1
else
  chmod 500 "$ro" && sh "$D/ro.sh" >"$D/ro.txt" 2>&1
  chmod 700 "$ro"
fi
if grep -q "kernel addone on" "$D/ro.txt"; then
  if grep -q "is damaged (.*removing it failed: .*), so it is still there" "$D/ro.txt" &&
    ! grep -q "it was removed" "$D/ro.txt"; then
    pass "a damaged entry in a read-only cache is said to stay"
  else
    fail "a damaged entry in a read-only cache is said to stay"; cat "$D/ro.txt"
  fi
else
  echo "note: no read-only directory could be made here; the read-only check is skipped"
fi

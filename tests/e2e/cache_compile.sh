#!/bin/sh
# The kernel cache through real compiles with the CLI (TILEC names it):
#  - a second run hits; an edit of a comment still hits; another binding misses;
#  - a dynamic (symbolic) dimension is not part of the key;
#  - TILEC_DISABLE_CACHE=1 reports "off";
#  - 16 processes compiling the same kernel at once all succeed and leave one valid entry;
#  - an unusable cache directory switches caching off with one warning, and the run succeeds;
#  - a corrupted entry is detected, rebuilt with one warning, and never served;
#  - a kernel that could not be stored says "miss-not-stored"; on a read-only directory
#    `cache stats` says so and `cache clear` exits 4.
T=${TILEC:-build/tilec}
D=$(mktemp -d /tmp/tilec-e2e-cc-XXXXXX)
trap 'rm -rf "$D"' EXIT
export TILEC_CACHE_DIR="$D/cache"
unset TILEC_DISABLE_CACHE TILEC_CACHE_MAX_MB
pass() { echo "PASS cache_compile: $1"; }
fail() { echo "FAIL cache_compile: $1"; }
status() { sed -n 's/.*"cache": "\([a-z-]*\)".*/\1/p'; }
check() { # name expected actual
  if [ "$2" = "$3" ]; then pass "$1"; else fail "$1: expected cache '$2', got '$3'"; fi
}

cp examples/elementwise.py "$D/k.py"
check "first compile misses" miss "$("$T" run "$D/k.py" --json | status)"
check "second compile hits" hit "$("$T" run "$D/k.py" --json | status)"
sed 's/^"""/""" edited comment./' examples/elementwise.py >"$D/k.py"
echo "# another comment" >>"$D/k.py"
check "comment edit still hits" hit "$("$T" run "$D/k.py" --json | status)"
check "another binding misses" miss "$("$T" run "$D/k.py" -D M=40 --json | status)"
# every target option that changes the code is part of the key: a kernel built with a planted bug
# (plant=, docs/testing.md) is never served to a compile without it, and the other way round
check "emu kernel first compile misses" miss "$("$T" run "$D/k.py" --target cuda --backend emu --json | status)"
check "a planted bug misses" miss "$("$T" run "$D/k.py" --target cuda,plant=layout-thread --backend emu --json | status)"
check "without the planted bug hits the first" hit "$("$T" run "$D/k.py" --target cuda --backend emu --json | status)"
check "symbolic example first size misses" miss "$("$T" run examples/symbolic_dim.py -D m=100 --json | status)"
check "symbolic example other size hits" hit "$("$T" run examples/symbolic_dim.py -D m=37 --json | status)"
check "TILEC_DISABLE_CACHE=1 is off" off "$(TILEC_DISABLE_CACHE=1 "$T" run "$D/k.py" --json | status)"

# 16 processes at once on a fresh directory
export TILEC_CACHE_DIR="$D/c16"
i=0
pids=""
while [ $i -lt 16 ]; do
  "$T" run examples/gemm.py -D M=64 -D N=64 -D K=64 --json >"$D/p$i.out" 2>&1 &
  pids="$pids $!"
  i=$((i + 1))
done
ok=1
for p in $pids; do wait "$p" || ok=0; done
[ $ok = 1 ] && pass "16 concurrent compiles all succeed" || { fail "16 concurrent compiles all succeed"; cat "$D"/p*.out | head -n 20; }
n=$("$T" cache ls | grep -vc invalid)
bad=$("$T" cache ls | grep -c invalid)
[ "$n" = 1 ] && [ "$bad" = 0 ] && pass "16 concurrent compiles leave one valid entry" || fail "16 concurrent compiles leave one valid entry (got $n valid, $bad invalid)"
check "after the race, a compile hits" hit "$("$T" run examples/gemm.py -D M=64 -D N=64 -D K=64 --json | status)"

# corruption: flip bytes in the middle of the entry; the next run must rebuild, not serve it
f=$(ls "$D"/c16/*.tce 2>/dev/null | head -n 1)
if [ -n "$f" ]; then
  size=$(wc -c <"$f")
  printf 'XXXXXXXXXXXXXXXX' | dd of="$f" bs=1 seek=$((size / 2)) conv=notrunc 2>/dev/null
  out=$("$T" run examples/gemm.py -D M=64 -D N=64 -D K=64 --verify --json 2>"$D/corrupt.err")
  check "corrupted entry is rebuilt" miss "$(echo "$out" | status)"
  w=$(grep -c "warning: kernel cache: the entry for 'matmul' in .* was damaged" "$D/corrupt.err")
  [ "$w" = 1 ] && pass "corrupted entry: one warning" || { fail "corrupted entry: one warning (got $w)"; cat "$D/corrupt.err"; }
  echo "$out" | grep -q '"ok": true' && pass "rebuilt kernel verifies" || fail "rebuilt kernel verifies"
  check "rebuilt entry hits again" hit "$("$T" run examples/gemm.py -D M=64 -D N=64 -D K=64 --json | status)"
  head -c $((size / 3)) "$f" >"$f.tmp" && mv "$f.tmp" "$f"
  check "truncated entry is rebuilt" miss "$("$T" run examples/gemm.py -D M=64 -D N=64 -D K=64 --json 2>/dev/null | status)"
else
  fail "no cache entry file found in $D/c16"
fi

# unusable directory: a path below a regular file cannot be created
: >"$D/plainfile"
export TILEC_CACHE_DIR="$D/plainfile/cache"
"$T" run "$D/k.py" --verify >"$D/ro.out" 2>"$D/ro.err"
rc=$?
[ $rc = 0 ] && pass "unusable cache dir: the run succeeds" || fail "unusable cache dir: the run succeeds (exit $rc)"
w=$(grep -c "warning" "$D/ro.err")
[ "$w" = 1 ] && pass "unusable cache dir: exactly one warning" || { fail "unusable cache dir: exactly one warning (got $w)"; cat "$D/ro.err"; }
check "unusable cache dir: --json says miss-not-stored" miss-not-stored "$("$T" run "$D/k.py" --json 2>/dev/null | status)"

# a read-only directory: a read-only bind mount for root (permissions do not stop root), chmod otherwise
ro="$D/rocache"
mkdir -p "$ro" && chmod 700 "$ro"
TILEC_CACHE_DIR="$ro" "$T" run "$D/k.py" >/dev/null 2>&1 # one entry to clear
{
  echo "export TILEC_CACHE_DIR='$ro'"
  echo "'$T' cache stats | grep '^enabled:'"
  echo "'$T' run '$D/k.py' -D M=48 --json 2>/dev/null | grep -o '\"cache\": \"[a-z-]*\"'"
  echo "'$T' cache clear >/dev/null 2>&1; echo \"clear exit \$?\""
} >"$D/ro.sh"
if [ "$(id -u)" = 0 ]; then
  unshare -m sh -c "mount --bind '$ro' '$ro' && mount -o remount,bind,ro '$ro' && sh '$D/ro.sh'" >"$D/ro.txt" 2>&1
else
  chmod 500 "$ro" && sh "$D/ro.sh" >"$D/ro.txt" 2>&1
  chmod 700 "$ro"
fi
if grep -q '^enabled:' "$D/ro.txt"; then
  grep -q '^enabled: read-only (cannot write in .*; entries are read, new kernels are not stored)$' "$D/ro.txt" &&
    pass "read-only cache dir: stats says read-only" || { fail "read-only cache dir: stats says read-only"; cat "$D/ro.txt"; }
  grep -qx '"cache": "miss-not-stored"' "$D/ro.txt" && pass "read-only cache dir: --json says miss-not-stored" ||
    { fail "read-only cache dir: --json says miss-not-stored"; cat "$D/ro.txt"; }
  grep -qx 'clear exit 4' "$D/ro.txt" && pass "read-only cache dir: cache clear exits 4" ||
    { fail "read-only cache dir: cache clear exits 4"; cat "$D/ro.txt"; }
else
  echo "note: no read-only directory could be made here (no mount namespace); read-only checks skipped"
  cat "$D/ro.txt"
fi

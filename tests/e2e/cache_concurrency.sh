#!/bin/sh
# Disk cache under real processes and real files (run by tests/run.sh with TILEC_BUILD set):
#  - 16 processes compiling the same kernels at once all succeed and leave one valid entry each;
#  - a process killed (SIGKILL) in the middle of a write leaves nothing that is ever served;
#  - truncated or corrupted entries are detected and rebuilt.
# The processes are tests/helpers/cache_worker (see its header for its commands).
B=${TILEC_BUILD:-build}
W=$B/tests/helpers/cache_worker
if [ ! -x "$W" ]; then
  echo "FAIL cache_concurrency: $W is not built (make $W)"
  exit 1
fi
unset TILEC_DISABLE_CACHE TILEC_CACHE_MAX_MB TILEC_CACHE_DIR
T=$(mktemp -d /tmp/tilec-e2e-cache-XXXXXX)
trap 'rm -rf "$T"' EXIT
pass() { echo "PASS cache_concurrency: $1"; }
fail() { echo "FAIL cache_concurrency: $1"; shift; for l in "$@"; do echo "  $l"; done; }

# ---- 16 processes, same keys, same moment (three rounds) ----
round=1
all_ok=1
while [ $round -le 3 ]; do
  D=$T/c16-$round
  pids=""
  i=0
  while [ $i -lt 16 ]; do
    "$W" "$D" compile k0 50000 k1 300000 k2 1000 k3 900000 >"$T/out.$round.$i" 2>&1 &
    pids="$pids $!"
    i=$((i + 1))
  done
  bad=0
  for p in $pids; do wait "$p" || bad=$((bad + 1)); done
  stats=$("$W" "$D" stats)
  misses=$(cat "$T"/out.$round.* | grep -c ' miss$')
  if [ $bad -ne 0 ] || [ "$stats" != "entries 4 valid 4 invalid 0 temp 0" ] || [ "$misses" -lt 4 ]; then
    fail "16 processes, round $round" "$bad processes failed" "stats: $stats" "misses: $misses" \
      "$(cat "$T"/out.$round.* | grep -v -e ' hit$' -e ' miss$' | head -n 5)"
    all_ok=0
  fi
  for k in "k0 50000" "k1 300000" "k2 1000" "k3 900000"; do
    # shellcheck disable=SC2086
    "$W" "$D" get $k >/dev/null || { fail "round $round: entry $k not served after the race"; all_ok=0; }
  done
  round=$((round + 1))
done
[ $all_ok = 1 ] && pass "16 processes putting/getting the same 4 keys at once (3 rounds, $misses compiles in the last): all succeed, 4 valid entries, no temp files"

# ---- 8 processes writing distinct keys under a 2 MiB limit: eviction races with readers ----
D=$T/evict
pids=""
i=0
while [ $i -lt 8 ]; do
  TILEC_CACHE_MAX_MB=2 "$W" "$D" churn "p$i-" 12 200000 >"$T/churn.$i" 2>&1 &
  pids="$pids $!"
  i=$((i + 1))
done
bad=0
for p in $pids; do wait "$p" || bad=$((bad + 1)); done
stats=$("$W" "$D" stats --bytes)
bytes=${stats##* bytes }
inv=$(echo "$stats" | sed 's/.* invalid \([0-9]*\) .*/\1/')
if [ $bad -eq 0 ] && [ "$inv" = 0 ] && [ "$bytes" -le 2097152 ] && [ "${stats#*temp 0 }" != "$stats" ]; then
  pass "8 processes x 12 puts of 200 KB under TILEC_CACHE_MAX_MB=2: concurrent eviction, no bad read, $bytes bytes kept"
else
  fail "concurrent eviction" "$bad processes failed" "stats: $stats" "$(cat "$T"/churn.* | head -n 5)"
fi

# ---- SIGKILL in the middle of a write ----
wait_writing() { # $1: output file of a --slow put; waits until it has started writing
  n=0
  until grep -q writing "$1" 2>/dev/null; do
    sleep 0.05
    n=$((n + 1))
    [ $n -gt 200 ] && return 1
  done
  sleep 0.2 # let it write some chunks
}
D=$T/kill
"$W" "$D" put victim 400000 --slow >"$T/slow.out" 2>&1 &
pid=$!
if ! wait_writing "$T/slow.out"; then
  fail "killed writer: it never started writing"
  kill -9 $pid 2>/dev/null
else
  kill -9 $pid
  wait $pid 2>/dev/null
  "$W" "$D" get victim 400000 >"$T/get.out"
  rc=$?
  stats=$("$W" "$D" stats)
  tmp=$(ls -A "$D" | grep '^\.tmp-' | head -n 1)
  tsize=$(stat -c %s "$D/$tmp" 2>/dev/null || echo 0)
  if [ $rc -eq 1 ] && [ "$stats" = "entries 0 valid 0 invalid 0 temp 1" ] && [ "$tsize" -gt 0 ] &&
    [ "$tsize" -lt 400000 ]; then
    pass "writer killed mid-write ($tsize bytes written): key absent, only a temp file left"
  else
    fail "killed writer" "get exit $rc (want 1: absent)" "stats: $stats" "temp file '$tmp' of $tsize bytes"
  fi
  # Replacing a valid entry: a writer killed mid-way leaves the old entry served intact.
  "$W" "$D" put victim 400000 >/dev/null
  "$W" "$D" put victim 400000 --slow >"$T/slow2.out" 2>&1 &
  pid=$!
  if wait_writing "$T/slow2.out"; then
    kill -9 $pid
    wait $pid 2>/dev/null
    "$W" "$D" get victim 400000 >/dev/null
    rc=$?
    stats=$("$W" "$D" stats)
    if [ $rc -eq 0 ] && [ "$stats" = "entries 1 valid 1 invalid 0 temp 2" ]; then
      pass "writer killed while replacing an entry: the old entry is still served intact"
    else
      fail "killed replacing writer" "get exit $rc (want 0: hit)" "stats: $stats"
    fi
  else
    fail "killed replacing writer: it never started writing"
    kill -9 $pid 2>/dev/null
  fi
  # Debris older than an hour is cleaned by the next put; fresh temp files are left alone.
  for f in "$D"/.tmp-*; do touch -d '2 hours ago' "$f"; done
  "$W" "$D" put other 1000 >/dev/null
  stats=$("$W" "$D" stats)
  if [ "$stats" = "entries 2 valid 2 invalid 0 temp 0" ]; then
    pass "stale temp files of killed writers removed by a later put"
  else
    fail "stale temp cleanup" "stats: $stats"
  fi
fi

# ---- SIGKILL at arbitrary points of full-speed writes ----
D=$T/killany
i=0
while [ $i -lt 24 ]; do
  "$W" "$D" put "any$((i % 6))" 2000000 >/dev/null 2>&1 &
  pid=$!
  sleep "$(printf "0.%03d" $((i * 7 % 40)))"
  kill -9 $pid 2>/dev/null
  wait $pid 2>/dev/null
  i=$((i + 1))
done
stats=$("$W" "$D" stats)
served=0
bad=0
i=0
while [ $i -lt 6 ]; do
  "$W" "$D" get "any$i" 2000000 >/dev/null
  rc=$?
  [ $rc -eq 0 ] && served=$((served + 1))
  [ $rc -ne 0 ] && [ $rc -ne 1 ] && bad=$((bad + 1))
  i=$((i + 1))
done
valid=$(echo "$stats" | sed 's/.* valid \([0-9]*\) .*/\1/')
if [ $bad -eq 0 ] && [ "${stats#* invalid 0 }" != "$stats" ] && [ "$valid" = "$served" ]; then
  pass "24 writers killed at arbitrary points: nothing invalid on disk ($stats), $served of 6 keys complete and served"
else
  fail "writers killed at arbitrary points" "stats: $stats" "$bad bad reads"
fi

# ---- corruption and truncation on disk ----
D=$T/corrupt
"$W" "$D" put k 100000 >/dev/null
f=$(ls "$D"/*.tce)
flip() { # $1 file, $2 offset: replace the byte there by a different one
  b=$(od -An -tu1 -j "$2" -N1 "$1" | tr -d ' ')
  nb=$(((b + 1) % 256))
  # shellcheck disable=SC2059
  printf "\\$(printf %o $nb)" | dd of="$1" bs=1 seek="$2" conv=notrunc 2>/dev/null
}
check_damage() { # $1 what, $2 expected reason prefix
  out=$("$W" "$D" get k 100000)
  rc=$?
  if [ $rc -ne 2 ] || [ "${out#invalid: $2}" = "$out" ] || [ -e "$f" ]; then
    fail "$1" "get exit $rc (want 2: invalid), said: $out" "file still there: $([ -e "$f" ] && echo yes || echo no)"
    return
  fi
  c=$("$W" "$D" compile k 100000)
  "$W" "$D" get k 100000 >/dev/null
  rc=$?
  if [ "$c" = "k miss" ] && [ $rc -eq 0 ]; then
    pass "$1: detected ($out), removed, rebuilt and served"
  else
    fail "$1: rebuild" "compile said: $c" "get exit $rc"
  fi
}
flip "$f" 5000
check_damage "one corrupted artifact byte" "checksum mismatch"
flip "$f" 20
check_damage "one corrupted key byte" "key mismatch"
truncate -s 60000 "$f"
check_damage "truncated entry" "truncated: header says"
: >"$f"
check_damage "empty entry file" "truncated: 0 bytes"
head -c 300 /dev/urandom >"$f"
check_damage "a foreign file under the entry's name" "bad magic"
exit 0

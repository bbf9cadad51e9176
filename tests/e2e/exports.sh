#!/bin/sh
# libtilec.so exports the public API (include/tilec.h, TILEC_API) and nothing else: the library
# is built with -fvisibility=hidden, so internal tc_* functions stay private.
B=${TILEC_BUILD:-build}
SO=$B/libtilec.so
if ! command -v nm >/dev/null 2>&1; then
  echo "note: exports: nm is not installed; the export check did not run"
  exit 0
fi
if [ ! -f "$SO" ]; then
  echo "FAIL exports: $SO not built"
  exit 0
fi
# defined dynamic symbols that are functions or data (not the linker's own _init/_fini etc.)
syms=$(nm -D --defined-only "$SO" | awk '$2 ~ /^[TDBR]$/ { print $3 }' | grep -v '^_init$\|^_fini$')
bad=$(printf '%s\n' "$syms" | grep -v '^tilec_' | head -n 5)
if [ -n "$bad" ]; then
  echo "FAIL exports: libtilec.so exports symbols outside the tilec_ API:"
  printf '%s\n' "$bad"
else
  echo "PASS exports: libtilec.so exports only tilec_* symbols"
fi
# every function tilec.h declares is exported
missing=""
for f in $(sed -n 's/^TILEC_API [^(]*[ *]\(tilec_[a-z_0-9]*\)(.*/\1/p' include/tilec.h); do
  printf '%s\n' "$syms" | grep -qx "$f" || missing="$missing $f"
done
if [ -n "$missing" ]; then
  echo "FAIL exports: tilec.h functions not exported:$missing"
else
  echo "PASS exports: every tilec.h function is exported"
fi

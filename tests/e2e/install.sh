#!/bin/sh
# `make install` into a private prefix, then build the C embedding example against the installed
# header and library (static through pkg-config, and shared) and run it.
B=${TILEC_BUILD:-build}
if [ "$B" != build ]; then echo "note: install: checked with the plain build only"; exit 0; fi
D=$(mktemp -d /tmp/tilec-e2e-install-XXXXXX)
trap 'rm -rf "$D"' EXIT
export TILEC_CACHE_DIR="$D/cache"
if make -s install BUILD="$B" PREFIX="$D/prefix" >"$D/log" 2>&1; then echo "PASS install: make install"; else echo "FAIL install: make install"; tail -n 5 "$D/log"; exit 0; fi
for f in bin/tilec lib/libtilec.a lib/libtilec.so include/tilec.h lib/pkgconfig/tilec.pc; do
  [ -e "$D/prefix/$f" ] && echo "PASS install: $f" || echo "FAIL install: $f missing"
done
"$D/prefix/bin/tilec" --version >/dev/null && echo "PASS install: installed tilec runs" || echo "FAIL install: installed tilec runs"
if command -v pkg-config >/dev/null 2>&1; then
  pc=$(PKG_CONFIG_PATH="$D/prefix/lib/pkgconfig" pkg-config --cflags --libs --static tilec)
  case "$pc" in
  *"-I$D/prefix/include"*"-ltilec"*"-ldl"*) echo "PASS install: pkg-config --cflags --libs --static tilec" ;;
  *) echo "FAIL install: pkg-config gives '$pc'" ;;
  esac
fi
if cc -std=c11 -Wall -Wextra -Werror -o "$D/embed_static" examples/c/embed.c -I"$D/prefix/include" "$D/prefix/lib/libtilec.a" \
  -ldl -lpthread -lm 2>"$D/cc.err" && "$D/embed_static" examples/softmax.py >"$D/out" 2>&1 && grep -q "ok$" "$D/out"; then
  echo "PASS install: static embedding example verifies"
else
  echo "FAIL install: static embedding example"; cat "$D/cc.err" "$D/out" 2>/dev/null | head -n 8
fi
if cc -std=c11 -o "$D/embed_shared" examples/c/embed.c -I"$D/prefix/include" -L"$D/prefix/lib" -ltilec -Wl,-rpath,"$D/prefix/lib" 2>"$D/cc2.err" &&
  "$D/embed_shared" examples/softmax.py >"$D/out2" 2>&1 && grep -q "ok$" "$D/out2"; then
  echo "PASS install: shared embedding example verifies"
else
  echo "FAIL install: shared embedding example"; cat "$D/cc2.err" "$D/out2" 2>/dev/null | head -n 8
fi

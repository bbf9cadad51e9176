#!/bin/sh
# tests/gpu/nan_paths.sh: the CUDA conversions' fast paths (bare cvt instructions, with a NaN
# check per vector copy group and per element loop) against the cpu backend, byte for byte,
# on inputs full of NaNs with payloads, infinities, subnormals and values that overflow
# float8, and on ordinary inputs. Needs a GPU, python3 with numpy, and a built tilec.
# Usage: sh tests/gpu/nan_paths.sh [TILEC]      (exit 1 on any difference)
T=${1:-build/tilec}
K=tests/gpu/data/conversions.py
dir=$(mktemp -d)
fail=0
for kind in special ordinary; do
  mkdir -p "$dir/$kind/in"
  python3 - "$dir/$kind/in" "$kind" <<'PY' || exit 1
import sys, numpy as np
out, kind = sys.argv[1], sys.argv[2]
rng = np.random.default_rng(7)
M, N = 64, 256
if kind == "special":
    x = rng.integers(0, 65536, size=(M, N), dtype=np.uint16)           # every kind of float16 code
    x[0, :64] = np.arange(0x7c00, 0x7c40); x[1, :64] = np.arange(0xfc00, 0xfc40)   # NaN payloads, infs
    f = rng.integers(0, 2**32, size=(M, N), dtype=np.uint64).astype(np.uint32)    # every kind of float32
    f[2, :8] = [0x7f800001, 0xffc00001, 0x7fbfffff, 0x7f800000, 0xff800000, 0x477fe000, 0x43e00000, 0x43f00000]
    f[3:, ::7] = rng.normal(0, 300, size=f[3:, ::7].shape).astype(np.float32).view(np.uint32)
    np.save(out + "/X.npy", x.view(np.float16)); np.save(out + "/F.npy", f.view(np.float32))
else:
    np.save(out + "/X.npy", rng.normal(0, 4, size=(M, N)).astype(np.float16))
    np.save(out + "/F.npy", rng.normal(0, 100, size=(M, N)).astype(np.float32))
PY
  for tgt in cpu cuda; do
    "$T" run "$K" --target $tgt --load "$dir/$kind/in" --save "$dir/$kind/$tgt" > "$dir/$kind/$tgt.log" 2>&1 || { echo "FAIL $kind: tilec run --target $tgt"; tail -5 "$dir/$kind/$tgt.log"; fail=1; }
  done
  for o in Z Y16 Ybf Y8 Y5 P; do
    if cmp -s "$dir/$kind/cpu/$o.npy" "$dir/$kind/cuda/$o.npy"; then echo "PASS $kind $o"
    else
      echo "FAIL $kind $o: cuda differs from cpu"; fail=1
      python3 -c "
import numpy as np, sys
a = np.load('$dir/$kind/cpu/$o.npy'); b = np.load('$dir/$kind/cuda/$o.npy')
u = {1: np.uint8, 2: np.uint16, 4: np.uint32}[a.dtype.itemsize]
a, b = a.view(u).ravel(), b.view(u).ravel(); d = np.nonzero(a != b)[0]
print('  ', len(d), 'differ; first:', [(int(i), hex(int(a[i])), hex(int(b[i]))) for i in d[:5]])" 2>&1
    fi
  done
done
rm -rf "$dir"
exit $fail

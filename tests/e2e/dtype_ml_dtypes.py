"""Compare tilec's narrow float conversions with ml_dtypes (and numpy for float16).

Usage: python3 dtype_ml_dtypes.py PATH/TO/dtype_dump
Prints one "PASS dtype ml_dtypes <type> ..." or "FAIL dtype ml_dtypes <type>: ..." line per
type and a line naming the ml_dtypes and numpy versions. Run by dtype_ml_dtypes.sh, which
first checks that ml_dtypes imports.

Checked per type: the decoding of every code (float32 bits, NaNs included); float32 -> type
on every value, every midpoint between neighbours, their float32 neighbours, specials and
random bit patterns; float64 -> type on midpoints nudged by 2^-40 (where rounding through
float32 would go wrong) and random float64 values; the saturating conversion against
ml_dtypes applied to the input clipped to the type's finite range.
Known difference, skipped and reported: float4_e2m1fn has no NaN; tilec maps NaN to +6 (see
docs/dtypes.md), ml_dtypes to a signed zero.
"""
import subprocess
import sys

import ml_dtypes
import numpy as np

np.seterr(all="ignore")

DUMP = sys.argv[1]
rng = np.random.default_rng(20260301)
failures = 0


def run(args, data):
    r = subprocess.run([DUMP] + args, input=data, capture_output=True, check=True)
    return r.stdout


def decode_table(name):
    out = run(["decode", name], b"").decode().split()
    return np.array([int(x, 16) for x in out[1::2]], dtype=np.uint64).astype(np.uint32)


def ours_encode(name, x, sat=False):
    mode = "encode64" if x.dtype == np.float64 else "encode"
    args = [mode, name] + (["--sat"] if sat else [])
    return np.frombuffer(run(args, x.tobytes()), dtype=np.uint32)


def theirs_encode(dt, x):
    with np.errstate(all="ignore"):
        y = x.astype(dt)
    return y.view(np.uint16 if y.itemsize == 2 else np.uint8).astype(np.uint32)


def first_mismatch(x, got, want):
    bad = np.nonzero(got != want)[0]
    if len(bad) == 0:
        return None
    i = bad[0]
    xi = x[i]
    bits = xi.view(np.uint64 if x.dtype == np.float64 else np.uint32)
    return f"{len(bad)} mismatches; first: input {float(xi)!r} (0x{int(bits):x}) -> tilec 0x{int(got[i]):x}, reference 0x{int(want[i]):x}"


def f32_inputs(values):
    """Values, midpoints, neighbours (both signs), specials and random bit patterns."""
    v = np.unique(np.abs(values[np.isfinite(values)]).astype(np.float64))
    step = v[-1] - v[-2]
    v = np.append(v, v[-1] + step)  # the first value above the range
    mids = (v[:-1] + v[1:]) / 2
    base = np.concatenate([v, mids, [v[0] / 2, v[0] * 0.75]]).astype(np.float32)
    near = np.concatenate([base, np.nextafter(base, np.float32(np.inf)), np.nextafter(base, np.float32(0))])
    specials = np.array([0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000, 0x7F800001, 0x7FA12345, 0x7F7FFFFF,
                         0x00000001, 0x007FFFFF, 0x00800000, 0x00400000, 0x00600000, 0x80000000, 0],
                        dtype=np.uint32).view(np.float32)
    rand = rng.integers(0, 2**32, size=1_000_000, dtype=np.uint64).astype(np.uint32).view(np.float32)
    return np.concatenate([near, -near, specials, rand]), mids


def f64_inputs(mids):
    m = np.concatenate([mids, -mids])
    nudged = np.concatenate([m, m * (1 + 2.0**-40), m * (1 - 2.0**-40)])
    rand = rng.integers(0, 2**64, size=200_000, dtype=np.uint64).view(np.float64)
    return np.concatenate([nudged, rand])


def check(name, dt, label):
    global failures
    problems = []
    codes = 1 << (16 if np.dtype(dt).itemsize == 2 else (4 if name == "float4_e2m1fn" else 8))
    raw = np.arange(codes, dtype=np.uint16 if codes == 65536 else np.uint8)
    theirs_dec = raw.view(dt).astype(np.float32).view(np.uint32)
    ours_dec = decode_table(name)
    if not np.array_equal(ours_dec, theirs_dec):
        i = np.nonzero(ours_dec != theirs_dec)[0][0]
        problems.append(f"decode 0x{i:x}: tilec 0x{int(ours_dec[i]):08x}, reference 0x{int(theirs_dec[i]):08x}")

    values = raw.view(dt).astype(np.float64)
    x32, mids = f32_inputs(values)
    skipped = 0
    if name == "float4_e2m1fn":
        keep = ~np.isnan(x32)
        skipped += int((~keep).sum())
        x32 = x32[keep]
    got, want = ours_encode(name, x32), theirs_encode(dt, x32)
    mm = first_mismatch(x32, got, want)
    if mm:
        problems.append("float32 -> " + mm)

    finite = x32[~np.isnan(x32)]
    hi = float(ml_dtypes.finfo(dt).max) if dt is not np.float16 else 65504.0
    clipped = np.clip(finite.astype(np.float64), -hi, hi).astype(np.float32)
    got, want = ours_encode(name, finite, sat=True), theirs_encode(dt, clipped)
    mm = first_mismatch(finite, got, want)
    if mm:
        problems.append("saturating float32 -> " + mm)

    x64 = f64_inputs(mids)
    if name == "float4_e2m1fn":
        x64 = x64[~np.isnan(x64)]
    got, want = ours_encode(name, x64), theirs_encode(dt, x64)
    mm = first_mismatch(x64, got, want)
    if mm:
        problems.append("float64 -> " + mm)

    if problems:
        failures += 1
        print(f"FAIL dtype {label} {name}: " + "; ".join(problems))
    else:
        note = f", {skipped} NaN inputs skipped (documented difference)" if skipped else ""
        print(f"PASS dtype {label} {name} (decode {codes} codes, {len(x32)} float32, {len(finite)} saturating, "
              f"{len(x64)} float64 inputs{note})")


print(f"PASS dtype ml_dtypes version {ml_dtypes.__version__} (numpy {np.__version__})")
check("float16", np.float16, "numpy")
for n in ["bfloat16", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e8m0fnu",
          "float4_e2m1fn"]:
    check(n, getattr(ml_dtypes, n), "ml_dtypes")
sys.exit(1 if failures else 0)

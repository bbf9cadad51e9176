#!/usr/bin/env python3
"""Independent numerical check of the examples: feed each one numpy inputs through
`tilec run --load`, read its outputs back with `--save`, and compare them with a numpy
reference written from the mathematical definition (not from tilec's IR or interpreter).

`tilec run --verify` compares the CPU backend with tilec's own reference interpreter; both sit
behind the same reader, so a misreading of TileLang would pass there. This script catches that.
Needs numpy. Usage: python3 examples/check/numpy_check.py [path/to/tilec] [name-filter]
Exit status 0 when every case matches.
"""
import os
import subprocess
import sys
import tempfile

import numpy as np

TILEC = sys.argv[1] if len(sys.argv) > 1 else "build/tilec"
FILTER = sys.argv[2] if len(sys.argv) > 2 else ""
EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
rng = np.random.default_rng(1234)


# ---- narrow float encodings (tilec stores bfloat16 / float8 as raw bits in .npy) ----------
def bf16_encode(x):
    u = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def bf16_decode(u):
    return (u.astype(np.uint32) << 16).view(np.float32)


def e4m3fn_decode(u):
    u = u.astype(np.int64)
    sign = np.where(u & 0x80, -1.0, 1.0)
    exp = (u >> 3) & 0xF
    man = u & 0x7
    val = np.where(exp == 0, man * 2.0 ** -9, (1 + man / 8.0) * 2.0 ** (exp - 7))
    val = np.where((u & 0x7F) == 0x7F, np.nan, val)
    return sign * val


def randn(*shape):
    return rng.standard_normal(shape)


def f16(*shape):
    return randn(*shape).astype(np.float16)


# ---- references ---------------------------------------------------------------------------
def softmax_rows(s):
    s = s - s.max(-1, keepdims=True)
    e = np.exp(s)
    return e / e.sum(-1, keepdims=True)


def attention(q, k, v, causal):
    q, k, v = (t.astype(np.float64) for t in (q, k, v))
    s = np.einsum("bhqd,bhkd->bhqk", q, k) / np.sqrt(q.shape[-1])
    if causal:
        n = q.shape[2]
        s = np.where(np.tril(np.ones((n, n), bool)), s, -np.inf)
    return np.einsum("bhqk,bhkd->bhqd", softmax_rows(s), v)


def conv_nhwc(x, w, S, D, P):
    N, H, W, C = x.shape
    KH, KW, _, F = w.shape
    OH = (H + 2 * P - D * (KH - 1) - 1) // S + 1
    OW = (W + 2 * P - D * (KW - 1) - 1) // S + 1
    xp = np.zeros((N, H + 2 * P, W + 2 * P, C))
    xp[:, P:P + H, P:P + W, :] = x
    out = np.zeros((N, OH, OW, F))
    for kh in range(KH):
        for kw in range(KW):
            patch = xp[:, kh * D:kh * D + S * (OH - 1) + 1:S, kw * D:kw * D + S * (OW - 1) + 1:S, :]
            out += np.einsum("nhwc,cf->nhwf", patch, w[kh, kw].astype(np.float64))
    return out


def case_list():
    c = []

    a, b = f16(256, 256), f16(256, 256)
    c.append(("gemm.py", [], {"A": a, "B": b}, {"C": a.astype(np.float64) @ b}, 2e-2))

    a, b = randn(200, 192), randn(256, 192)
    ab, bb = bf16_encode(a), bf16_encode(b)
    c.append(("gemm_transposed.py", [], {"A": ab, "B": bb},
              {"C": bf16_decode(ab).astype(np.float64) @ bf16_decode(bb).T.astype(np.float64)}, 0.15))

    A, x = f16(1000, 1024), f16(1024)
    c.append(("gemv.py", [], {"A": A, "x": x}, {"y": A.astype(np.float64) @ x}, 6e-2))

    for causal, seq in ((True, 128), (False, 100)):
        q, k, v = f16(1, 2, seq, 64), f16(1, 2, seq, 64), f16(1, 2, seq, 64)
        c.append(("flash_attention.py", ["-D", f"is_causal={causal}", "-D", f"seq_len={seq}"],
                  {"Q": q, "K": k, "V": v}, {"Output": attention(q, k, v, causal)}, 1e-2))

    X, W = f16(200, 256), f16(256)
    Xf = X.astype(np.float64)
    c.append(("rms_norm.py", [], {"X": X, "W": W},
              {"Y": Xf / np.sqrt((Xf ** 2).mean(-1, keepdims=True) + 1e-6) * W}, 2e-2))

    X, g, be = randn(256, 384), randn(384), randn(384)
    Xb, gb, bb = bf16_encode(X), bf16_encode(g), bf16_encode(be)
    Xf = bf16_decode(Xb).astype(np.float64)
    mean = Xf.mean(-1)
    rstd = 1 / np.sqrt(Xf.var(-1) + 1e-5)
    Y = (Xf - mean[:, None]) * rstd[:, None] * bf16_decode(gb) + bf16_decode(bb)
    c.append(("layer_norm.py", [], {"X": Xb, "gamma": gb, "beta": bb},
              {"Y": Y, "Mean": mean, "Rstd": rstd}, 5e-2))

    X = (3 * randn(200, 1000)).astype(np.float16)
    Xf = X.astype(np.float64)
    lse = np.log(np.exp(Xf - Xf.max(-1, keepdims=True)).sum(-1)) + Xf.max(-1)
    c.append(("softmax.py", ["-D", "m=200"], {"X": X}, {"Y": softmax_rows(Xf), "LSE": lse}, 1e-3))

    A, B, C = f16(1000, 256), f16(1000, 256), f16(1000, 256)
    v = A.astype(np.float64) * B + C
    acts = {"relu": np.maximum(v, 0), "silu": v / (1 + np.exp(-v)),
            "gelu_tanh": 0.5 * v * (1 + np.tanh(0.7978845608 * (v + 0.044715 * v ** 3)))}
    for act, ref in acts.items():
        c.append(("elementwise.py", ["-D", f"activation={act}"], {"A": A, "B": B, "C": C}, {"D": ref}, 1e-2))

    for args, (N, C_, H, W_, F, K, S, D, P) in (([], (2, 24, 14, 14, 64, 3, 1, 1, 1)),
                                               (["-D", "N=1", "-D", "C=16", "-D", "H=9", "-D", "W=7", "-D", "F=40",
                                                 "-D", "S=2", "-D", "P=0"], (1, 16, 9, 7, 40, 3, 2, 1, 0))):
        x, w = f16(N, H, W_, C_), f16(K, K, C_, F)
        c.append(("conv_implicit_gemm.py", args, {"data": x, "kernel": w},
                  {"out": conv_nhwc(x.astype(np.float64), w, S, D, P)}, 5e-2))

    X = randn(64, 1000).astype(np.float32)
    c.append(("cumsum.py", [], {"X": X}, {"Y": np.cumsum(X.astype(np.float64), 1)}, 1e-3))
    c.append(("cumsum.py", ["-D", "reverse=True"], {"X": X},
              {"Y": np.cumsum(X[:, ::-1].astype(np.float64), 1)[:, ::-1]}, 1e-3))

    X = (4 * randn(200, 512)).astype(np.float16)
    amax = np.maximum(np.abs(X.astype(np.float64)).max(1), 1e-4)
    scale = (amax.astype(np.float32) / np.float32(448.0)).astype(np.float64)
    q = np.clip(X / scale[:, None], -448, 448)
    c.append(("fp8_cast.py", [], {"X": X}, {"X_fp8": q, "Scale": scale}, 7e-2))

    X, Wt, bias = f16(200, 256), f16(256, 256), f16(256)
    c.append(("symbolic_dim.py", ["-D", "m=200"], {"X": X, "W": Wt, "bias": bias},
              {"Y": X.astype(np.float64) @ Wt + bias}, 2e-2))

    a, b = f16(100, 40), f16(40, 72)
    c.append(("eager_gemm.py", ["-D", "M=100", "-D", "N=72", "-D", "K=40"], {"A": a, "B": b},
              {"C": a.astype(np.float64) @ b}, 1e-2))

    A = randn(320, 200).astype(np.float32)
    c.append(("prim_func_module.py", [], {"A": A}, {"B": A.T}, 0.0))

    X = randn(1000, 256).astype(np.float32)
    Xf = X.astype(np.float64)
    c.append(("reduce_sum.py", [], {"X": X},
              {"ColSum": Xf.sum(0), "ColL1": np.abs(Xf).sum(0), "ColMax": Xf.max(0), "ColMin": Xf.min(0)}, 1e-4))

    a, b, C0 = f16(200, 512), f16(512, 256), randn(200, 256).astype(np.float32)
    c.append(("splitk_gemm.py", [], {"A": a, "B": b, "C": C0}, {"C": C0 + a.astype(np.float64) @ b}, 1e-3))

    X = rng.integers(-8, 72, 10000).astype(np.int32)
    hist = np.bincount(np.clip(X, 0, 63), minlength=64).astype(np.int64)
    clipped = np.array([((X < 0) | (X >= 64)).sum()])
    c.append(("atomic_add_hist.py", [], {"X": X, "Hist": np.zeros(64, np.int32), "Clipped": np.zeros(1, np.int32)},
              {"Hist": hist, "Clipped": clipped}, 0.0))
    x = f16(100, 4, 64)
    half = 32
    inv = 10000.0 ** (-np.arange(half) * 2.0 / 64)
    th = np.arange(100)[:, None, None] * inv[None, None, :]
    x1, x2 = x[..., :half].astype(np.float64), x[..., half:].astype(np.float64)
    c.append(("rope.py", [], {"X": x},
              {"Y": np.concatenate([x1 * np.cos(th) - x2 * np.sin(th), x2 * np.cos(th) + x1 * np.sin(th)], -1)}, 1e-2))

    # Quantisation is checked against a float32 model: floor() of a float32 expression is
    # discontinuous, so a float64 reference can differ by one step at exact halves.
    X = f16(100, 256)
    xf = X.astype(np.float32)
    sc = (np.maximum(np.abs(xf).max(1), np.float32(1e-8)) / np.float32(127)).astype(np.float32)
    q = np.clip(np.floor(xf / sc[:, None] + np.float32(0.5)), -127, 127)
    c.append(("quant_int8.py", [], {"X": X}, {"Q": q, "Scale": sc, "Xhat": q * sc[:, None].astype(np.float64)}, 1e-3))

    X = (2 * randn(50, 1000)).astype(np.float32)
    labels = rng.integers(0, 1000, 50).astype(np.int32)
    labels[::7] = -100
    Xf = X.astype(np.float64)
    lse = np.log(np.exp(Xf - Xf.max(1, keepdims=True)).sum(1)) + Xf.max(1)
    loss = np.where(labels == -100, 0.0, lse - Xf[np.arange(50), np.clip(labels, 0, None)])
    c.append(("cross_entropy.py", [], {"X": X, "Labels": labels}, {"Loss": loss}, 1e-5))
    return c


def decode(name, arr, example):
    if arr.dtype == np.uint16 and example in ("gemm_transposed.py", "layer_norm.py"):
        return bf16_decode(arr)
    if arr.dtype == np.uint8 and example == "fp8_cast.py":
        return e4m3fn_decode(arr)
    return arr


def main():
    failed = 0
    for example, args, inputs, refs, tol in case_list():
        label = f"{example} {' '.join(args)}".strip()
        if FILTER not in label:
            continue
        with tempfile.TemporaryDirectory() as tmp:
            indir, outdir = os.path.join(tmp, "in"), os.path.join(tmp, "out")
            os.makedirs(indir)
            for name, arr in inputs.items():
                np.save(os.path.join(indir, name + ".npy"), arr)
            cmd = [TILEC, "run", os.path.join(EXAMPLES, example), *args, "--load", indir, "--save", outdir]
            proc = subprocess.run(cmd, capture_output=True, text=True)
            if proc.returncode != 0:
                print(f"FAIL {label}: tilec exited {proc.returncode}\n{proc.stderr.strip()[:600]}")
                failed += 1
                continue
            worst = []
            ok = True
            for name, ref in refs.items():
                got = decode(name, np.load(os.path.join(outdir, name + ".npy")), example).astype(np.float64)
                ref = np.asarray(ref, np.float64)
                if got.shape != ref.shape:
                    ok = False
                    worst.append(f"{name}: shape {got.shape} != {ref.shape}")
                    continue
                err = np.abs(got - ref)
                bound = tol * (1 + np.abs(ref))
                bad = ~(err <= bound)
                worst.append(f"{name}: max_abs_err={err.max():.3g}")
                if bad.any():
                    ok = False
                    idx = np.unravel_index(np.argmax(np.where(bad, err - bound, -np.inf)), err.shape)
                    worst.append(f"  {bad.sum()} elements off, e.g. at {idx}: got {got[idx]!r}, want {ref[idx]!r}")
            print(("PASS " if ok else "FAIL ") + label + ": " + "; ".join(worst))
            failed += not ok
    print("numpy check:", "all cases match" if not failed else f"{failed} case(s) failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

"""The gated tanh·σ chain: N producer–consumer kernels, each reading the previous one's output.

TVM's Metal runtime returned silently wrong results on such chains from about 11 dispatches on
(cosine 0.95 at N = 11, 0.71 at N = 20, against LLVM). Stage k computes, per element,
    x_{k+1} = tanh(x_k * a_k[c] + b_k[c]) * sigmoid(x_k * g_k[c] + h_k[c]) + x_k
with per-channel weights from a fixed seed, fp32, every intermediate in its own device buffer.
`--fused` adds the same N stages as one TileLang kernel (the value stays in a register).

    python3 examples/workloads/chain.py --stages 11
    python3 examples/workloads/chain.py --stages 20 --rows 65536 --channels 256   # 16M elements
"""
import sys

import numpy as np

from common import parser, run_all, upload
import kernels


def weights(stages, channels, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((1, channels)).astype(np.float32)
    P = np.empty((stages, 4, channels), dtype=np.float32)
    P[:, 0] = rng.uniform(0.5, 1.5, (stages, channels))
    P[:, 1] = rng.uniform(-0.5, 0.5, (stages, channels))
    P[:, 2] = rng.uniform(0.5, 1.5, (stages, channels))
    P[:, 3] = rng.uniform(-0.5, 0.5, (stages, channels))
    return x, P


def main():
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--stages", type=int, default=11, help="producer-consumer kernels (default 11)")
    p.add_argument("--rows", type=int, default=64)
    p.add_argument("--channels", type=int, default=256)
    p.add_argument("--fused", action="store_true", help="also run the N stages as one fused kernel")
    args = p.parse_args()
    R, C, N = args.rows, args.channels, args.stages
    rng = np.random.default_rng(args.seed)
    x0 = rng.standard_normal((R, C)).astype(np.float32)
    _, P = weights(N, C, args.seed + 1)

    uploaded = {}

    def forward(target):
        if target not in uploaded:  # weights live on the device across runs
            uploaded[target] = (upload(list(P), target), upload(P, target))
        Ps, Pall = uploaded[target]
        k = kernels.gated.compile(target=target, R=R, C=C)
        X = upload(x0, target)
        for s in range(N):
            X = k(X, Ps[s])  # a new device buffer per stage, as a graph executor makes them
        outs = [(k.backend, X.numpy())]
        if args.fused:
            kf = kernels.gated_fused.compile(target=target, R=R, C=C, stages=N)
            outs.append((kf.backend + " fused", kf(upload(x0, target), Pall).numpy()))
        return outs

    def numpy_forward():
        x = x0.astype(np.float64)
        for s in range(N):
            a, b, g, h = P[s].astype(np.float64)
            x = np.tanh(x * a + b) / (1 + np.exp(-(x * g + h))) + x
        return x

    title = (f"gated tanh·σ chain, N = {N} kernels, {R}x{C} = {R * C} fp32 elements, seed {args.seed}: "
             "every backend against the cpu backend")
    return run_all(title, forward, numpy_forward, args)

if __name__ == "__main__":
    sys.exit(main())

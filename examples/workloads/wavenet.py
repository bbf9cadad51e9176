"""A WaveNet-style stack: dilated causal convolutions, gated tanh·σ units, residual and skip
connections, then a ReLU -> 1x1 -> ReLU -> 1x1 head; fp32, weights from a fixed seed.

Each layer l (dilation 2^(l mod 10)) is two kernels: the gated dilated convolution
    h = tanh(conv_f(x)) * sigmoid(conv_g(x))      (width 2, causal)
and the residual/skip 1x1 convolutions
    x <- x + W_r h + b_r,   skip <- skip + W_s h + b_s
so a 10-layer stack is 22 producer–consumer kernels, every intermediate on the device.

    python3 examples/workloads/wavenet.py                       # 10 layers, 32 channels, 1024 steps
    python3 examples/workloads/wavenet.py --layers 20 --channels 64 --length 16000
"""
import sys

import numpy as np

from common import parser, run_all, upload
import kernels


def main():
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--layers", type=int, default=10)
    p.add_argument("--channels", type=int, default=32)
    p.add_argument("--length", type=int, default=1024, help="time steps")
    args = p.parse_args()
    C, L, NL = args.channels, args.length, args.layers
    rng = np.random.default_rng(args.seed)
    x0 = rng.standard_normal((C, L)).astype(np.float32)
    s_conv, s_1x1 = 1 / np.sqrt(2 * C), 1 / np.sqrt(C)
    layers = []
    for _ in range(NL):
        layers.append({
            "Wf": (rng.standard_normal((C, C, 2)) * s_conv).astype(np.float32),
            "Wg": (rng.standard_normal((C, C, 2)) * s_conv).astype(np.float32),
            "B": (rng.standard_normal((2, C)) * 0.1).astype(np.float32),
            "Wr": (rng.standard_normal((C, C)) * s_1x1).astype(np.float32),
            "Ws": (rng.standard_normal((C, C)) * s_1x1).astype(np.float32),
            "Bv": (rng.standard_normal((2, C)) * 0.1).astype(np.float32),
        })
    W1 = (rng.standard_normal((C, C)) * s_1x1).astype(np.float32)
    b1 = (rng.standard_normal(C) * 0.1).astype(np.float32)
    W2 = (rng.standard_normal((C, C)) * s_1x1).astype(np.float32)
    b2 = (rng.standard_normal(C) * 0.1).astype(np.float32)

    def dilation(l):
        return 2 ** (l % 10)

    uploaded = {}

    def forward(target):
        if target not in uploaded:  # weights live on the device across runs
            uploaded[target] = (upload(layers, target), upload([W1, b1, W2, b2], target))
        ws, head = uploaded[target]
        x = upload(x0, target)
        skip = upload(np.zeros((C, L), np.float32), target)
        rs = kernels.residual_skip.compile(target=target, C=C, L=L)
        for l, w in enumerate(ws):
            gate = kernels.gated_dilated_conv.compile(target=target, C=C, L=L, dilation=dilation(l))
            h = gate(x, w["Wf"], w["Wg"], w["B"])
            x, skip = rs(x, h, skip, w["Wr"], w["Ws"], w["Bv"])
        k1 = kernels.pointwise.compile(target=target, Cin=C, P=L, Cout=C, act="relu", relu_in=True)
        k2 = kernels.pointwise.compile(target=target, Cin=C, P=L, Cout=C, act="none")
        y = k2(k1(skip, head[0], head[1]), head[2], head[3])
        return [(rs.backend, y.numpy())]

    def numpy_forward():
        x, skip = x0.astype(np.float64), np.zeros((C, L))
        for l, w in enumerate(layers):
            d = dilation(l)
            past = np.zeros_like(x)
            if d < L:
                past[:, d:] = x[:, :L - d]
            f = w["Wf"][:, :, 0] @ past + w["Wf"][:, :, 1] @ x + w["B"][0][:, None]
            g = w["Wg"][:, :, 0] @ past + w["Wg"][:, :, 1] @ x + w["B"][1][:, None]
            h = np.tanh(f) / (1 + np.exp(-g))
            x = x + w["Wr"] @ h + w["Bv"][0][:, None]
            skip = skip + w["Ws"] @ h + w["Bv"][1][:, None]
        y1 = np.maximum(W1 @ np.maximum(skip, 0) + b1[:, None], 0)
        return W2 @ y1 + b2[:, None]

    title = (f"WaveNet stack, {NL} layers ({2 * NL + 2} kernels), {C} channels x {L} steps, fp32, "
             f"seed {args.seed}: every backend against the cpu backend")
    return run_all(title, forward, numpy_forward, args)


if __name__ == "__main__":
    sys.exit(main())

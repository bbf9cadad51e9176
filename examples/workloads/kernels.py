"""TileLang kernels of the seed workloads (fp32, one thread per output element).

Each is a @tilec.jit kernel factory: tilec reads this file, binds the factory's parameters and
compiles the kernel for a target. The workloads (chain.py, wavenet.py, mobilenet_v2.py) chain
them from Python with every intermediate kept on the device. Layouts: (rows, channels) for the
chains, (channels, time) for WaveNet, (channels, height, width) for the CNN (batch 1).
"""
import tilec
import tilec.language as T

THREADS = 256


@tilec.jit(out_idx=[-1])
def gated(R=64, C=256, residual=True):
    """Y = tanh(X * P[0] + P[1]) * sigmoid(X * P[2] + P[3]) (+ X), per channel c."""
    N = R * C

    @T.prim_func
    def main(X: T.Tensor((R, C), "float32"), P: T.Tensor((4, C), "float32"), Y: T.Tensor((R, C), "float32")):
        with T.Kernel(T.ceildiv(N, THREADS), threads=THREADS) as bx:
            i = bx * THREADS + T.get_thread_binding(0)
            if i < N:
                r = i // C
                c = i % C
                x = X[r, c]
                g = T.tanh(x * P[0, c] + P[1, c]) * T.sigmoid(x * P[2, c] + P[3, c])
                if residual:
                    Y[r, c] = g + x
                else:
                    Y[r, c] = g

    return main


@tilec.jit(out_idx=[-1])
def gated_fused(R=64, C=256, stages=20, residual=True):
    """`stages` gated stages in one kernel: the value stays in a register between stages."""
    N = R * C

    @T.prim_func
    def main(X: T.Tensor((R, C), "float32"), P: T.Tensor((stages, 4, C), "float32"),
             Y: T.Tensor((R, C), "float32")):
        with T.Kernel(T.ceildiv(N, THREADS), threads=THREADS) as bx:
            i = bx * THREADS + T.get_thread_binding(0)
            v = T.alloc_local((1,), "float32")
            if i < N:
                r = i // C
                c = i % C
                v[0] = X[r, c]
                for s in T.serial(stages):
                    g = T.tanh(v[0] * P[s, 0, c] + P[s, 1, c]) * T.sigmoid(v[0] * P[s, 2, c] + P[s, 3, c])
                    if residual:
                        v[0] = g + v[0]
                    else:
                        v[0] = g
                Y[r, c] = v[0]

    return main


@tilec.jit(out_idx=[-1])
def gated_dilated_conv(C=32, L=1024, dilation=1):
    """WaveNet's gated unit: H = tanh(conv_f(X)) * sigmoid(conv_g(X)), each a causal convolution
    of width 2 and the given dilation: conv(X)[o, t] = sum_i W[o, i, 0] X[i, t - d] +
    W[o, i, 1] X[i, t] + B[o] (X[i, t - d] = 0 before the start)."""
    N = C * L

    @T.prim_func
    def main(X: T.Tensor((C, L), "float32"), Wf: T.Tensor((C, C, 2), "float32"),
             Wg: T.Tensor((C, C, 2), "float32"), B: T.Tensor((2, C), "float32"), H: T.Tensor((C, L), "float32")):
        with T.Kernel(T.ceildiv(N, THREADS), threads=THREADS) as bx:
            i = bx * THREADS + T.get_thread_binding(0)
            acc = T.alloc_local((2,), "float32")
            if i < N:
                o = i // L
                t = i % L
                acc[0] = B[0, o]
                acc[1] = B[1, o]
                for k in T.serial(C):
                    past = T.if_then_else(t >= dilation, X[k, t - dilation], 0.0)
                    now = X[k, t]
                    acc[0] += Wf[o, k, 0] * past + Wf[o, k, 1] * now
                    acc[1] += Wg[o, k, 0] * past + Wg[o, k, 1] * now
                H[o, t] = T.tanh(acc[0]) * T.sigmoid(acc[1])

    return main


@tilec.jit(out_idx=[-2, -1])
def residual_skip(C=32, L=1024):
    """Xout = X + Wr @ H + B[0]; Sout = S + Ws @ H + B[1] (1x1 convolutions)."""
    N = C * L

    @T.prim_func
    def main(X: T.Tensor((C, L), "float32"), H: T.Tensor((C, L), "float32"), S: T.Tensor((C, L), "float32"),
             Wr: T.Tensor((C, C), "float32"), Ws: T.Tensor((C, C), "float32"), B: T.Tensor((2, C), "float32"),
             Xout: T.Tensor((C, L), "float32"), Sout: T.Tensor((C, L), "float32")):
        with T.Kernel(T.ceildiv(N, THREADS), threads=THREADS) as bx:
            i = bx * THREADS + T.get_thread_binding(0)
            acc = T.alloc_local((2,), "float32")
            if i < N:
                o = i // L
                t = i % L
                acc[0] = B[0, o]
                acc[1] = B[1, o]
                for k in T.serial(C):
                    h = H[k, t]
                    acc[0] += Wr[o, k] * h
                    acc[1] += Ws[o, k] * h
                Xout[o, t] = X[o, t] + acc[0]
                Sout[o, t] = S[o, t] + acc[1]

    return main


@tilec.jit(out_idx=[-1])
def pointwise(Cin=32, P=1024, Cout=32, act="none", relu_in=False):
    """A 1x1 convolution: Y[o, p] = act(sum_i W[o, i] * f(X[i, p]) + B[o]), f = relu when relu_in.
    act: "none", "relu" or "relu6"."""
    N = Cout * P

    @T.prim_func
    def main(X: T.Tensor((Cin, P), "float32"), W: T.Tensor((Cout, Cin), "float32"), B: T.Tensor((Cout,), "float32"),
             Y: T.Tensor((Cout, P), "float32")):
        with T.Kernel(T.ceildiv(N, THREADS), threads=THREADS) as bx:
            i = bx * THREADS + T.get_thread_binding(0)
            acc = T.alloc_local((1,), "float32")
            if i < N:
                o = i // P
                p = i % P
                acc[0] = B[o]
                for k in T.serial(Cin):
                    if relu_in:
                        acc[0] += W[o, k] * T.max(X[k, p], 0.0)
                    else:
                        acc[0] += W[o, k] * X[k, p]
                if act == "relu6":
                    Y[o, p] = T.min(T.max(acc[0], 0.0), 6.0)
                elif act == "relu":
                    Y[o, p] = T.max(acc[0], 0.0)
                else:
                    Y[o, p] = acc[0]

    return main


@tilec.jit(out_idx=[-1])
def pointwise_residual(Cin=32, P=1024, Cout=32):
    """The projection of an inverted residual block with its shortcut: Y = W @ X + B + R."""
    N = Cout * P

    @T.prim_func
    def main(X: T.Tensor((Cin, P), "float32"), W: T.Tensor((Cout, Cin), "float32"), B: T.Tensor((Cout,), "float32"),
             R: T.Tensor((Cout, P), "float32"), Y: T.Tensor((Cout, P), "float32")):
        with T.Kernel(T.ceildiv(N, THREADS), threads=THREADS) as bx:
            i = bx * THREADS + T.get_thread_binding(0)
            acc = T.alloc_local((1,), "float32")
            if i < N:
                o = i // P
                p = i % P
                acc[0] = B[o]
                for k in T.serial(Cin):
                    acc[0] += W[o, k] * X[k, p]
                Y[o, p] = acc[0] + R[o, p]

    return main


@tilec.jit(out_idx=[-1])
def conv2d(Cin=3, H=224, W=224, Cout=32, K=3, stride=2, pad=1, act="relu6"):
    """A dense convolution, CHW, with bias and ReLU6 (the stem of the CNN)."""
    Ho = (H + 2 * pad - K) // stride + 1
    Wo = (W + 2 * pad - K) // stride + 1
    N = Cout * Ho * Wo

    @T.prim_func
    def main(X: T.Tensor((Cin, H, W), "float32"), Wt: T.Tensor((Cout, Cin, K, K), "float32"),
             B: T.Tensor((Cout,), "float32"), Y: T.Tensor((Cout, Ho, Wo), "float32")):
        with T.Kernel(T.ceildiv(N, THREADS), threads=THREADS) as bx:
            i = bx * THREADS + T.get_thread_binding(0)
            acc = T.alloc_local((1,), "float32")
            if i < N:
                o = i // (Ho * Wo)
                y = (i // Wo) % Ho
                x = i % Wo
                acc[0] = B[o]
                for c in T.serial(Cin):
                    for kh in T.serial(K):
                        for kw in T.serial(K):
                            h = y * stride - pad + kh
                            w = x * stride - pad + kw
                            valid = (h >= 0) and (h < H) and (w >= 0) and (w < W)
                            acc[0] += Wt[o, c, kh, kw] * T.if_then_else(valid, X[c, h, w], 0.0)
                if act == "relu6":
                    Y[o, y, x] = T.min(T.max(acc[0], 0.0), 6.0)
                else:
                    Y[o, y, x] = acc[0]

    return main


@tilec.jit(out_idx=[-1])
def depthwise(C=32, H=112, W=112, stride=1, act="relu6"):
    """A depthwise 3x3 convolution (padding 1), CHW, with bias and ReLU6."""
    Ho = (H + 2 - 3) // stride + 1
    Wo = (W + 2 - 3) // stride + 1
    N = C * Ho * Wo

    @T.prim_func
    def main(X: T.Tensor((C, H, W), "float32"), Wt: T.Tensor((C, 3, 3), "float32"), B: T.Tensor((C,), "float32"),
             Y: T.Tensor((C, Ho, Wo), "float32")):
        with T.Kernel(T.ceildiv(N, THREADS), threads=THREADS) as bx:
            i = bx * THREADS + T.get_thread_binding(0)
            acc = T.alloc_local((1,), "float32")
            if i < N:
                c = i // (Ho * Wo)
                y = (i // Wo) % Ho
                x = i % Wo
                acc[0] = B[c]
                for kh in T.serial(3):
                    for kw in T.serial(3):
                        h = y * stride - 1 + kh
                        w = x * stride - 1 + kw
                        valid = (h >= 0) and (h < H) and (w >= 0) and (w < W)
                        acc[0] += Wt[c, kh, kw] * T.if_then_else(valid, X[c, h, w], 0.0)
                if act == "relu6":
                    Y[c, y, x] = T.min(T.max(acc[0], 0.0), 6.0)
                else:
                    Y[c, y, x] = acc[0]

    return main


@tilec.jit(out_idx=[-1])
def avgpool(C=1280, P=49):
    """Global average pooling: Y[c] = mean over p of X[c, p]."""

    @T.prim_func
    def main(X: T.Tensor((C, P), "float32"), Y: T.Tensor((C,), "float32")):
        with T.Kernel(T.ceildiv(C, THREADS), threads=THREADS) as bx:
            c = bx * THREADS + T.get_thread_binding(0)
            acc = T.alloc_local((1,), "float32")
            if c < C:
                acc[0] = 0.0
                for p in T.serial(P):
                    acc[0] += X[c, p]
                Y[c] = acc[0] / P

    return main


@tilec.jit(out_idx=[-1])
def linear(Cin=1280, Cout=1000):
    """Y = W @ X + B (the classifier)."""

    @T.prim_func
    def main(X: T.Tensor((Cin,), "float32"), W: T.Tensor((Cout, Cin), "float32"), B: T.Tensor((Cout,), "float32"),
             Y: T.Tensor((Cout,), "float32")):
        with T.Kernel(T.ceildiv(Cout, THREADS), threads=THREADS) as bx:
            o = bx * THREADS + T.get_thread_binding(0)
            acc = T.alloc_local((1,), "float32")
            if o < Cout:
                acc[0] = B[o]
                for k in T.serial(Cin):
                    acc[0] += W[o, k] * X[k]
                Y[o] = acc[0]

    return main

"""A MobileNetV2-style CNN on one image: a 3x3 stride-2 stem, inverted residual blocks (1x1
expansion + ReLU6, depthwise 3x3 + ReLU6, 1x1 linear projection, shortcut when the shape allows),
a 1x1 convolution to 1280 channels, global average pooling and a 1000-way classifier; fp32,
batch norm folded into the biases, weights from a fixed seed. Reports the argmax (the class).

    python3 examples/workloads/mobilenet_v2.py                          # 224x224, width 1.0
    python3 examples/workloads/mobilenet_v2.py --resolution 64 --width 0.5   # a small one
"""
import sys

import numpy as np

from common import parser, run_all, upload
import kernels

# (expansion t, channels c, repeats n, first stride s): the MobileNetV2 paper's table 2
CONFIG = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)]


def divisible(v, d=8):
    return max(d, int(v + d / 2) // d * d)


def build(width, res, classes, rng):
    """The layer list: dicts with kind, shapes and weights."""
    def he(shape, fan_in):
        return (rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)).astype(np.float32)

    def bias(n):
        return (rng.standard_normal(n) * 0.05).astype(np.float32)

    layers = []
    cin, h = divisible(32 * width), (res + 1) // 2
    layers.append({"kind": "stem", "Cout": cin, "H": res, "W": he((cin, 3, 3, 3), 27), "B": bias(cin)})
    for t, c, n, s in CONFIG:
        cout = divisible(c * width)
        for i in range(n):
            stride = s if i == 0 else 1
            hid = cin * t
            blk = {"kind": "block", "Cin": cin, "Cout": cout, "hidden": hid, "H": h, "stride": stride, "t": t,
                   "res": stride == 1 and cin == cout}
            if t != 1:
                blk["We"], blk["Be"] = he((hid, cin), cin), bias(hid)
            blk["Wd"], blk["Bd"] = he((hid, 3, 3), 9), bias(hid)
            blk["Wp"], blk["Bp"] = (he((cout, hid), hid) * 0.5).astype(np.float32), bias(cout)
            layers.append(blk)
            h = (h - 1) // stride + 1
            cin = cout
    last = 1280 if width <= 1.0 else divisible(1280 * width)
    layers.append({"kind": "head", "Cin": cin, "Cout": last, "H": h, "W": he((last, cin), cin), "B": bias(last),
                   "Wc": (rng.standard_normal((classes, last)) / np.sqrt(last)).astype(np.float32),
                   "Bc": bias(classes)})
    return layers


def main():
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--resolution", type=int, default=224)
    p.add_argument("--width", type=float, default=1.0, help="width multiplier (default 1.0)")
    p.add_argument("--classes", type=int, default=1000)
    args = p.parse_args()
    rng = np.random.default_rng(args.seed)
    res = args.resolution
    image = rng.uniform(-1, 1, (3, res, res)).astype(np.float32)
    layers = build(args.width, res, args.classes, rng)
    weight_names = ("W", "B", "We", "Be", "Wd", "Bd", "Wp", "Bp", "Wc", "Bc")

    uploaded = {}

    def forward(target):
        if target not in uploaded:  # weights live on the device across runs
            uploaded[target] = [{k: upload(v, target) for k, v in ly.items() if k in weight_names} for ly in layers]
        x = upload(image, target)
        backend = None
        for ly, w in zip(layers, uploaded[target]):
            if ly["kind"] == "stem":
                k = kernels.conv2d.compile(target=target, Cin=3, H=res, W=res, Cout=ly["Cout"], K=3, stride=2, pad=1,
                                           act="relu6")
                x = k(x, w["W"], w["B"])
                backend = k.backend
            elif ly["kind"] == "block":
                cin, hid, cout, h, s = ly["Cin"], ly["hidden"], ly["Cout"], ly["H"], ly["stride"]
                inp = x
                y = x
                if ly["t"] != 1:
                    ke = kernels.pointwise.compile(target=target, Cin=cin, P=h * h, Cout=hid, act="relu6")
                    y = ke(_flat(y, cin, h * h), w["We"], w["Be"])
                kd = kernels.depthwise.compile(target=target, C=hid, H=h, W=h, stride=s, act="relu6")
                y = kd(_chw(y, hid, h), w["Wd"], w["Bd"])
                ho = (h - 1) // s + 1
                if ly["res"]:
                    kp = kernels.pointwise_residual.compile(target=target, Cin=hid, P=ho * ho, Cout=cout)
                    x = kp(_flat(y, hid, ho * ho), w["Wp"], w["Bp"], _flat(inp, cout, ho * ho))
                else:
                    kp = kernels.pointwise.compile(target=target, Cin=hid, P=ho * ho, Cout=cout, act="none")
                    x = kp(_flat(y, hid, ho * ho), w["Wp"], w["Bp"])
            else:
                h = ly["H"]
                kh = kernels.pointwise.compile(target=target, Cin=ly["Cin"], P=h * h, Cout=ly["Cout"], act="relu6")
                y = kh(_flat(x, ly["Cin"], h * h), w["W"], w["B"])
                y = kernels.avgpool.compile(target=target, C=ly["Cout"], P=h * h)(y)
                x = kernels.linear.compile(target=target, Cin=ly["Cout"], Cout=args.classes)(y, w["Wc"], w["Bc"])
        return [(backend, x.numpy())]

    def numpy_forward():
        x = image.astype(np.float64)
        for ly in layers:
            if ly["kind"] == "stem":
                x = np.clip(_np_conv(x, ly["W"].astype(np.float64), 2) + ly["B"][:, None, None], 0, 6)
            elif ly["kind"] == "block":
                inp, y = x, x
                c, h = y.shape[0], y.shape[1]
                if ly["t"] != 1:
                    y = np.clip(np.einsum("oi,ihw->ohw", ly["We"], y) + ly["Be"][:, None, None], 0, 6)
                y = np.clip(_np_depthwise(y, ly["Wd"].astype(np.float64), ly["stride"]) + ly["Bd"][:, None, None], 0, 6)
                y = np.einsum("oi,ihw->ohw", ly["Wp"], y) + ly["Bp"][:, None, None]
                x = y + inp if ly["res"] else y
            else:
                y = np.clip(np.einsum("oi,ihw->ohw", ly["W"], x) + ly["B"][:, None, None], 0, 6)
                x = ly["Wc"] @ y.reshape(y.shape[0], -1).mean(axis=1) + ly["Bc"]
        return x

    blocks = sum(1 for ly in layers if ly["kind"] == "block")
    title = (f"MobileNetV2-style CNN, {res}x{res} image, width {args.width}, {blocks} inverted residual blocks, "
             f"{args.classes} classes, fp32, seed {args.seed}: every backend against the cpu backend (argmax = class)")
    return run_all(title, forward, numpy_forward, args)


def _flat(t, c, p):
    """The same device buffer seen as (C, H*W): no copy."""
    return t.reshape(c, p)


def _chw(t, c, h):
    return t.reshape(c, h, h)


def _np_conv(x, w, stride):
    cout, cin, k, _ = w.shape
    h = x.shape[1]
    xp = np.pad(x, ((0, 0), (1, 1), (1, 1)))
    ho = (h + 2 - k) // stride + 1
    out = np.zeros((cout, ho, ho))
    for kh in range(k):
        for kw in range(k):
            patch = xp[:, kh:kh + stride * (ho - 1) + 1:stride, kw:kw + stride * (ho - 1) + 1:stride]
            out += np.einsum("oi,ihw->ohw", w[:, :, kh, kw], patch)
    return out


def _np_depthwise(x, w, stride):
    c, h = x.shape[0], x.shape[1]
    xp = np.pad(x, ((0, 0), (1, 1), (1, 1)))
    ho = (h - 1) // stride + 1
    out = np.zeros((c, ho, ho))
    for kh in range(3):
        for kw in range(3):
            out += w[:, kh, kw][:, None, None] * xp[:, kh:kh + stride * (ho - 1) + 1:stride,
                                                     kw:kw + stride * (ho - 1) + 1:stride]
    return out


if __name__ == "__main__":
    sys.exit(main())

"""npy_close.py A_DIR B_DIR: every NAME.npy in A_DIR agrees with B_DIR/NAME.npy (floats within
atol 1e-2 + rtol 1e-2, other types exactly). Plain Python (no numpy): the GPU targets' outputs
checked against the cpu's in tests/e2e/differential.sh. Exit 1 and name the first mismatch."""
import ast, os, struct, sys

FLOAT_CODES = {"<f2": "e", "<f4": "f", "<f8": "d"}


def read(path):
    with open(path, "rb") as f:
        data = f.read()
    hlen = struct.unpack("<H", data[8:10])[0] if data[6] == 1 else struct.unpack("<I", data[8:12])[0]
    start = 10 if data[6] == 1 else 12
    header = ast.literal_eval(data[start:start + hlen].decode("latin1"))
    return header["descr"], data[start + hlen:]


def main():
    a_dir, b_dir = sys.argv[1], sys.argv[2]
    for name in sorted(os.listdir(a_dir)):
        if not name.endswith(".npy"):
            continue
        da, ba = read(os.path.join(a_dir, name))
        db, bb = read(os.path.join(b_dir, name))
        if da != db or len(ba) != len(bb):
            print(f"{name}: dtype/size differ ({da}, {len(ba)} bytes vs {db}, {len(bb)} bytes)")
            return 1
        code = FLOAT_CODES.get(da)
        if code is None:
            if ba != bb:
                print(f"{name}: {da} values differ")
                return 1
            continue
        n = len(ba) // struct.calcsize(code)
        xa = struct.unpack(f"<{n}{code}", ba)
        xb = struct.unpack(f"<{n}{code}", bb)
        for i, (x, y) in enumerate(zip(xa, xb)):
            if x != x and y != y:
                continue
            if not abs(x - y) <= 1e-2 + 1e-2 * abs(y):
                print(f"{name}[{i}]: {x} vs cpu {y}")
                return 1
    return 0


sys.exit(main())

# tilec: source --target cuda --kernel-only
import tilelang.language as T
@T.prim_func
def k(dQ: T.Tensor((64, 64), "float32")):
    with T.Kernel(1, threads=32) as bx:
        T.annotate_layout({dQ: T.Layout(dQ.shape, lambda i, j: [j, i])})
        dQ[0, 0] = 1.0

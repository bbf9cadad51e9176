# tilec: source --target metal --kernel-only
import tilelang.language as T


@T.prim_func
def double_it(A: T.Tensor((128,), "float64"), B: T.Tensor((128,), "float64")):
    with T.Kernel(1, threads=128) as bx:
        for i in T.Parallel(128):
            B[i] = A[i] * 2.0

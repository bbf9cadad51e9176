# The blocks of a prim_func run as one launch in tilec, so their thread counts must agree.
import tilelang.language as T


@T.prim_func
def two(A: T.Tensor((64,), "float32"), B: T.Tensor((64,), "float32")):
    with T.Kernel(2, threads=32) as bx:
        for i in T.Parallel(32):
            A[bx * 32 + i] = 1.0
    with T.Kernel(1, threads=64) as bx:
        for i in T.Parallel(64):
            B[i] = 2.0

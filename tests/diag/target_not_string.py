import tilelang.language as T
from tilelang import tvm as tvm

TARGET = tvm.target.Target(90)


@T.prim_func
def k(A: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=64) as bx:
        for i in T.Parallel(64):
            A[i] = A[i] * 2.0 if TARGET is not None else A[i]

# Of the items of one 'with', only one may open a scope (T.Kernel, T.ws); iket.range does nothing.
import tilelang.language as T


@T.prim_func
def k(A: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=64) as bx, T.Kernel(2, threads=64) as by:
        for i in T.Parallel(64):
            A[i] = 0.0

# A name whose module in the sibling package imports from a module the package lacks: a
# file:line:col error at that import, in the package's file (compat_constructs.sh checks it).
import tilelang.language as T

from sibling_pkg import not_there


@T.prim_func
def k(A: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=64) as bx:
        for i in T.Parallel(64):
            A[i] = A[i] * not_there

# tilec: run -D a=5
# A dimension computed from symbolic sizes (a * b) that -D does not fully bind: the error names
# the size and the -D that gives it.
import tilelang.language as T

a = T.dynamic("a")
b = T.dynamic("b")


@T.prim_func
def k(X: T.Tensor((a * b, 16), "float32"), S: T.Tensor((a, b), "float32")):
    with T.Kernel(a, b, threads=32) as (bx, by):
        for i in T.Parallel(16):
            X[bx * b + by, i] = S[bx, by]

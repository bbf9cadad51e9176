# A tensor whose dimension is computed from a symbolic size (n * 4): `tilec run` cannot size it
# yet (the API names plain symbolic dimensions only) and says so instead of naming '?'.
import tilelang
import tilelang.language as T

n = T.dynamic("n")


@T.prim_func
def rows(A: T.Tensor((n * 4, 16), "float32"), B: T.Tensor((n * 4, 16), "float32")):
    with T.Kernel(1, threads=32) as bx:
        for i, j in T.Parallel(4, 16):
            B[i, j] = A[i, j] + 1

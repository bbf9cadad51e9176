# A tensor whose dimension is computed from a symbolic size that no plain dimension names (n * 4):
# `tilec run` sizes it from -D n=.., and the launch binds n by solving n * 4 = the tensor's size.
import tilelang
import tilelang.language as T

n = T.dynamic("n")


@T.prim_func
def rows(A: T.Tensor((n * 4, 16), "float32"), B: T.Tensor((n * 4, 16), "float32")):
    with T.Kernel(1, threads=32) as bx:
        for i, j in T.Parallel(4, 16):
            B[i, j] = A[i, j] + 1

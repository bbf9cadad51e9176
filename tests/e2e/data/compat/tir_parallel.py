# T.parallel(start, stop): TIR's one-dimensional parallel loop, a T.Parallel over [start, stop);
# nested ones form a T.Parallel nest. Ref holds the same values from T.Parallel.
import tilelang
import tilelang.language as T

M, N = 16, 32


@T.prim_func
def scale(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32"), Ref: T.Tensor((M, N), "float32")):
    with T.Kernel(1, threads=64) as bx:
        S = T.alloc_shared((M, N), "float32")
        T.copy(A, S)
        for i in T.parallel(M):
            for j in T.parallel(4, N):
                if i >= 2:
                    S[i, j] = S[i, j] * 2 + j
        T.copy(S, B)
        for i, j in T.Parallel(M, N):
            Ref[i, j] = T.if_then_else(i >= 2 and j >= 4, A[i, j] * 2 + j, A[i, j])

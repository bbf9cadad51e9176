# T.atomic_addx4 / T.atomic_addx2: 4 or 2 consecutive elements added atomically. Each element
# of B (cleared first) gets A twice (once through x4, once through x2); Ref is 2 * A.
import tilelang
import tilelang.language as T

M, N = 8, 32


@T.prim_func
def accumulate(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32"), Ref: T.Tensor((M, N), "float32")):
    with T.Kernel(1, threads=32) as bx:
        S = T.alloc_shared((M, N), "float32")
        T.copy(A, S)
        for i, j in T.Parallel(M, N):
            B[i, j] = 0
        for i, j in T.Parallel(M, N // 4):
            T.atomic_addx4(B[i, j * 4], S[i, j * 4])
        for i, j in T.Parallel(M, N // 2):
            T.atomic_addx2(B[i, j * 2], S[i, j * 2])
        for i, j in T.Parallel(M, N):
            Ref[i, j] = A[i, j] * 2

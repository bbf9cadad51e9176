# One block per (row, column group): with N past 65535 the grid's y extent passes CUDA's limit,
# and tilec launches it folded into x (meta fold=1), each block recovering its (bx, by); with
# M * N past 2^31 - 1 blocks no launch can hold it, and `tilec run` says so before it allocates
# the inputs (M = 40000, N = 70000: 700 TB).
import tilelang.language as T

M = T.dynamic("M")
N = T.dynamic("N")


@T.prim_func
def rows(A: T.Tensor((N, M, 32), "float32"), B: T.Tensor((N, M, 32), "float32")):
    with T.Kernel(M, N, threads=32) as (bx, by):
        for i in T.Parallel(32):
            B[by, bx, i] = A[by, bx, i] * 2.0 - 1.0


# The same with T.use_swizzle: the panel walk runs over the logical grid, folded or not.
@T.prim_func
def rows_swizzled(A: T.Tensor((N, M, 32), "float32"), B: T.Tensor((N, M, 32), "float32")):
    with T.Kernel(M, N, threads=32) as (bx, by):
        T.use_swizzle(panel_size=4)
        for i in T.Parallel(32):
            B[by, bx, i] = A[by, bx, i] * 2.0 + 1.0

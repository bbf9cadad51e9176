# Several `with T.Kernel(...)` blocks in one prim_func (TileLang launches each in turn). They
# touch disjoint tensors, so tilec runs them as one launch whose grid holds both, each block
# guarded to its own grid: `two_blocks` (a 1-D grid of 4 and a 2-D grid of 2 x 3, whose last
# row of blocks has nothing to do) must give the outputs `one_block` computes in one block.
import tilelang
import tilelang.language as T

M, N = 64, 16


@T.prim_func
def two_blocks(A: T.Tensor((M, N), "float32"), C: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32"),
               D: T.Tensor((M, N), "float32")):
    with T.Kernel(4, threads=32) as bx:
        S = T.alloc_shared((16, N), "float32")
        T.copy(A[bx * 16 : (bx + 1) * 16, :], S)
        for i, j in T.Parallel(16, N):
            B[bx * 16 + i, j] = S[i, j] * 2 + 1
    with T.Kernel(2, 3, threads=32) as (cx, cy):
        for i, j in T.Parallel(32, N // 2):
            if cy * 32 + i < M:
                D[cy * 32 + i, cx * (N // 2) + j] = C[cy * 32 + i, cx * (N // 2) + j] + 3


@T.prim_func
def one_block(A: T.Tensor((M, N), "float32"), C: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32"),
              D: T.Tensor((M, N), "float32")):
    with T.Kernel(1, threads=32) as bx:
        for i, j in T.Parallel(M, N):
            B[i, j] = A[i, j] * 2 + 1
            D[i, j] = C[i, j] + 3

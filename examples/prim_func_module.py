"""Tiled matrix transpose written as a module-level @T.prim_func.

There is no factory: the kernel's sizes and dtype are module constants, read when the prim_func
is defined. A block stages a BLOCK x BLOCK tile through shared memory and writes it back
transposed. M = 320 is five tiles of BLOCK = 64, but N = 200 is NOT a multiple of BLOCK, so the
last column of tiles is partial.
"""
import tilelang
import tilelang.language as T

M = 320
N = 200
BLOCK = 64
THREADS = 128
dtype = "float32"


@T.prim_func
def transpose(
    A: T.Tensor((M, N), dtype),
    B: T.Tensor((N, M), dtype),
):
    with T.Kernel(T.ceildiv(N, BLOCK), T.ceildiv(M, BLOCK), threads=THREADS) as (bx, by):
        tile = T.alloc_shared((BLOCK, BLOCK), dtype)
        tile_t = T.alloc_fragment((BLOCK, BLOCK), dtype)

        T.copy(A[by * BLOCK, bx * BLOCK], tile)
        for i, j in T.Parallel(BLOCK, BLOCK):
            tile_t[i, j] = tile[j, i]
        T.copy(tile_t, B[bx * BLOCK, by * BLOCK])


if __name__ == "__main__":
    import torch

    kernel = tilelang.compile(transpose, out_idx=[1])
    a = torch.randn(M, N, device="cuda")
    torch.testing.assert_close(kernel(a), a.T.contiguous())
    print("transpose: all checks pass")

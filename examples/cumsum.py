"""Row-wise inclusive prefix sum of a long matrix, Y[i, j] = sum(X[i, :j+1]).

A block owns block_M rows and walks them in column tiles: T.cumsum scans each tile in shared
memory and a per-row carry links the tiles. With reverse=True the kernel computes suffix sums
(Y[i, j] = sum(X[i, j:])), walking the tiles from the right. The default N = 1000 is NOT a
multiple of block_N = 128; the zeros read past the end do not change the sums.
"""
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def cumsum_rows(M=64, N=1000, block_M=16, block_N=128, reverse=False, threads=128, dtype=T.float32):
    num_tiles = T.ceildiv(N, block_N)

    @T.prim_func
    def main(
        X: T.Tensor((M, N), dtype),
        Y: T.Tensor((M, N), dtype),
    ):
        with T.Kernel(T.ceildiv(M, block_M), threads=threads) as bx:
            tile = T.alloc_shared((block_M, block_N), dtype)
            carry = T.alloc_fragment((block_M,), dtype)

            T.clear(carry)
            for t in T.serial(num_tiles):
                col0 = (num_tiles - 1 - t) * block_N if reverse else t * block_N
                T.copy(X[bx * block_M, col0], tile)
                T.cumsum(src=tile, dim=1, reverse=reverse)
                for i, j in T.Parallel(block_M, block_N):
                    tile[i, j] += carry[i]
                for i in T.Parallel(block_M):
                    if reverse:
                        carry[i] = tile[i, 0]
                    else:
                        carry[i] = tile[i, block_N - 1]
                T.copy(tile, Y[bx * block_M, col0])

    return main


def ref_program(x, reverse=False):
    import torch

    if reverse:
        return torch.flip(torch.cumsum(torch.flip(x, [1]), dim=1), [1])
    return torch.cumsum(x, dim=1)


if __name__ == "__main__":
    import torch

    for reverse in (False, True):
        kernel = cumsum_rows(M=1024, N=4000, reverse=reverse)
        x = torch.randn(1024, 4000, device="cuda")
        torch.testing.assert_close(kernel(x), ref_program(x, reverse), rtol=1e-3, atol=1e-3)
    print("cumsum: all checks pass")

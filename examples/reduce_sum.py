"""Column statistics of a tall matrix: for every column, the sum, the L1 norm, the maximum and
the minimum over all M rows.

A block owns block_N columns and walks the rows in tiles of block_M. The running results live in
fragments, and each tile is folded into them with clear=False reductions along dim=0 (sum, max,
min), so nothing is re-initialised between tiles; reduce_abssum has no clear argument, so its
per-tile result is added by hand. The default M = 1000 is NOT a multiple of block_M = 64: rows
past the end read as zero, which is harmless for the sums, and are masked to -inf / +inf for the
maximum and the minimum.
"""
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[1, 2, 3, 4])
def column_stats(M=1000, N=256, block_M=64, block_N=64, threads=128, dtype=T.float32):
    accum_dtype = T.float32

    @T.prim_func
    def main(
        X: T.Tensor((M, N), dtype),
        ColSum: T.Tensor((N,), accum_dtype),
        ColL1: T.Tensor((N,), accum_dtype),
        ColMax: T.Tensor((N,), accum_dtype),
        ColMin: T.Tensor((N,), accum_dtype),
    ):
        with T.Kernel(T.ceildiv(N, block_N), threads=threads) as bx:
            tile = T.alloc_fragment((block_M, block_N), accum_dtype)
            tile_hi = T.alloc_fragment((block_M, block_N), accum_dtype)
            tile_lo = T.alloc_fragment((block_M, block_N), accum_dtype)
            col_sum = T.alloc_fragment((block_N,), accum_dtype)
            col_l1 = T.alloc_fragment((block_N,), accum_dtype)
            tile_l1 = T.alloc_fragment((block_N,), accum_dtype)
            col_max = T.alloc_fragment((block_N,), accum_dtype)
            col_min = T.alloc_fragment((block_N,), accum_dtype)

            T.clear(col_sum)
            T.clear(col_l1)
            T.fill(col_max, -T.infinity(accum_dtype))
            T.fill(col_min, T.infinity(accum_dtype))
            for ko in range(T.ceildiv(M, block_M)):
                T.copy(X[ko * block_M, bx * block_N], tile)
                for i, j in T.Parallel(block_M, block_N):
                    in_rows = ko * block_M + i < M
                    tile_hi[i, j] = T.if_then_else(in_rows, tile[i, j], -T.infinity(accum_dtype))
                    tile_lo[i, j] = T.if_then_else(in_rows, tile[i, j], T.infinity(accum_dtype))
                T.reduce_sum(tile, col_sum, dim=0, clear=False)
                T.reduce_max(tile_hi, col_max, dim=0, clear=False)
                T.reduce_min(tile_lo, col_min, dim=0, clear=False)
                T.reduce_abssum(tile, tile_l1, dim=0)
                for j in T.Parallel(block_N):
                    col_l1[j] += tile_l1[j]

            T.copy(col_sum, ColSum[bx * block_N])
            T.copy(col_l1, ColL1[bx * block_N])
            T.copy(col_max, ColMax[bx * block_N])
            T.copy(col_min, ColMin[bx * block_N])

    return main


def ref_program(x):
    return x.sum(0), x.abs().sum(0), x.amax(0), x.amin(0)


if __name__ == "__main__":
    import torch

    kernel = column_stats(M=10000, N=4096)
    x = torch.randn(10000, 4096, device="cuda")
    for got, want in zip(kernel(x), ref_program(x)):
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-3)
    print("column stats: all checks pass")

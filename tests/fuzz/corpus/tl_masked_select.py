"""Selections between literals inside T.Parallel, as TileLang's examples write them: topk masks,
block-sparse masks, index clamps and conditional expressions over thread indices."""
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[1, 2])
def masked_topk(M=64, N=96, topk=4, blk_m=16, threads=64, dtype="float32"):

    @T.prim_func
    def main(logits: T.Tensor([M, N], dtype), weights: T.Tensor([M, N], dtype),
             flags: T.Tensor([M, N], "int32")):
        with T.Kernel(T.ceildiv(M, blk_m), threads=threads) as bx:
            row = T.alloc_fragment([blk_m, N], dtype)
            best = T.alloc_fragment([blk_m], dtype)
            T.copy(logits[bx * blk_m, 0], row)
            for _ in T.serial(topk):
                T.reduce_max(row, best, dim=1)
                for i, j in T.Parallel(blk_m, N):
                    row[i, j] = T.if_then_else(row[i, j] >= best[i], -1e9, row[i, j])
            for i, j in T.Parallel(blk_m, N):
                weights[bx * blk_m + i, j] = T.if_then_else(row[i, j] > -1e9, 0.0, 1.0)
                flags[bx * blk_m + i, j] = (0 if j < N // 2 else 1) + T.if_then_else(i < 8, 0, 2)
                flags[bx * blk_m + i, j] += T.if_then_else(logits[bx * blk_m + i, j] < 0, True, 3)

    return main

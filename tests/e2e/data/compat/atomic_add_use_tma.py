# T.atomic_add(region, shared_tile, use_tma=True) (flash_attention/example_gqa_bwd_tma_reduce.py):
# a TMA reduction on sm_90+, the same sums: every block adds its tile of A into the rows of C.
import tilelang
import tilelang.language as T


@tilelang.jit
def tile_sum(M, N, block_M):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), C: T.Tensor((block_M, N), "float32")):
        with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
            S = T.alloc_shared((block_M, N), "float32")
            T.copy(A[bx * block_M : (bx + 1) * block_M, :], S)
            T.atomic_add(C[0:block_M, :], S, use_tma=True)

    return main

"""A warp-specialized GEMM whose epilogue goes through a shared tile the program allocates
itself, named as the lowering names its own warp-private staging tiles, and read back by other
threads (rows reversed). Its consumers must keep their barriers between tiles: a name is no
proof that a tile is warp-private (docs/cuda.md, "Consumers that run free")."""
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def matmul(M=512, N=512, K=256, block_M=128, block_N=256, block_K=64, num_stages=2, threads=256,
           dtype=T.float16, accum_dtype=T.float32):
    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            tcg_epilogue = T.alloc_shared((block_M, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            T.use_swizzle(panel_size=10)
            T.clear(C_local)
            for ko in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                T.copy(A[by * block_M, ko * block_K], A_shared)
                T.copy(B[ko * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, tcg_epilogue)
            for i, j in T.Parallel(block_M, block_N):
                C[by * block_M + i, bx * block_N + j] = tcg_epilogue[block_M - 1 - i, j]

    return main


# Explicit warp specialization inside T.Pipelined, the form TileLang's warp_specialize examples
# take: single-buffered shared tiles, warp group 1 loading them by T.tma_copy against one
# "loaded" barrier, warp group 0 waiting for it, running the gemm and arriving on "consumed",
# which the loader waits for before it overwrites the tiles. T.Pipelined's num_stages gives the
# depth. tilec maps it onto the pipeline (src/gpu/ws_explicit.c); C must equal A @ B.
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[2])
def ws_pipelined(M, N, K, block_M=128, block_N=128, block_K=64, stages=3, dtype="float16"):

    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=256) as (bx, by):
            A_tile = T.alloc_shared((block_M, block_K), dtype)
            B_tile = T.alloc_shared((block_K, block_N), dtype)
            acc = T.alloc_fragment((block_M, block_N), "float32")
            loaded = T.alloc_barrier(arrive_count=128)
            consumed = T.alloc_barrier(arrive_count=128)
            with T.ws(0):
                T.clear(acc)
            for ko in T.Pipelined(T.ceildiv(K, block_K), num_stages=stages):
                with T.ws(1):
                    T.barrier_wait(consumed, (ko + 1) % 2)
                    T.tma_copy(A[by * block_M, ko * block_K], A_tile, barrier=loaded)
                    T.tma_copy(B[ko * block_K, bx * block_N], B_tile, barrier=loaded)
                    T.barrier_arrive(loaded)
                with T.ws(0):
                    T.barrier_wait(loaded, ko % 2)
                    T.gemm(A_tile, B_tile, acc)
                    T.barrier_arrive(consumed)
            with T.ws(0):
                T.copy(acc, C[by * block_M, bx * block_N])

    return main

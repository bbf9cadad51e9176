# Scheduling data that the IR keeps as typed fields (tests/e2e/schedule_fields.sh): layouts,
# T.Pipelined arguments, T.vectorized, copy and gemm hints, block swizzle. None changes results.
import tilelang
import tilelang.language as T


def sched(M=64, N=64, K=64, block_M=32, block_N=32, block_K=16, dtype=T.float16, accum_dtype=T.float32):
    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            T.annotate_layout({
                A_shared: tilelang.layout.make_swizzled_layout(A_shared),
                B_shared: T.Layout((block_K, block_N), lambda i, j: i * (block_N + 8) + j),
                C_local: T.Fragment((block_M, block_N), forward_thread_fn=lambda i, j: (i % 16) * 8 + j % 8,
                                    forward_index_fn=lambda i, j: (i // 16) * 4 + j // 8),
            })
            T.use_swizzle(panel_size=4, order="column")
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=2, order=[0, 1, 2], stage=[0, 0, 1], group=[[0, 1], [2]]):
                T.copy(A[by * block_M, k * block_K], A_shared, disable_tma=True, coalesced_width=4)
                T.copy(B[k * block_K, bx * block_N], B_shared, eviction_policy="evict_first")
                T.gemm(A_shared, B_shared, C_local, wg_wait=1)
            for i in T.Parallel(block_M):
                for j in T.vectorized(block_N):
                    C[by * block_M + i, bx * block_N + j] = C_local[i, j]

    return main

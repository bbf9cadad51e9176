# Explicit warp specialization whose ring would map onto T.Pipelined (src/gpu/ws_explicit.c),
# but the kernel also adds to a counter once per thread at its top level (T.atomic_add on one
# element, run by all 256 threads): the mapped block would keep only the gemm's 128 threads and
# count half as many. tilec keeps the program order for it (--explain says why); Cnt must be
# 256 a block.
import tilelang
import tilelang.language as T


@tilelang.jit
def ws_counter(M, N, K, block_M=64, block_N=64, block_K=32, dtype="float16"):
    stages = 2

    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), "float32"), Cnt: T.Tensor((1,), "int32")):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=256) as (bx, by):
            A_s = T.alloc_shared((stages, block_M, block_K), dtype)
            B_s = T.alloc_shared((stages, block_K, block_N), dtype)
            acc = T.alloc_fragment((block_M, block_N), "float32")
            bars = T.alloc_barrier([128] * (2 * stages))
            T.atomic_add(Cnt[0], 1)
            with T.ws(0):
                T.clear(acc)
            for k in range(T.ceildiv(K, block_K)):
                s = k % stages
                with T.ws(1):
                    T.mbarrier_wait_parity(bars[s + stages], ((k // stages) % 2) ^ 1)
                    T.tma_copy(A[by * block_M:(by + 1) * block_M, k * block_K:(k + 1) * block_K], A_s[s, :, :], barrier=bars[s])
                    T.tma_copy(B[k * block_K:(k + 1) * block_K, bx * block_N:(bx + 1) * block_N], B_s[s, :, :], barrier=bars[s])
                    T.mbarrier_arrive(bars[s])
                with T.ws(0):
                    T.mbarrier_wait_parity(bars[s], (k // stages) % 2)
                    T.gemm(A_s[s, :, :], B_s[s, :, :], acc)
                    T.mbarrier_arrive(bars[s + stages])
            with T.ws(0):
                T.copy(acc, C[by * block_M, bx * block_N])

    return main

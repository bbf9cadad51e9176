# Explicit warp specialization that is not a plain ring: the consumer's second gemm reads the
# stage the producer does not fill in this iteration (A_s[1 - s]), so dropping the stage index
# would change what it reads. tilec keeps the program order (--explain says why) instead of
# mapping it onto T.Pipelined (src/gpu/ws_explicit.c). It reads that stage before any copy has
# filled it at k = 0, so it is a test of the refusal, not a kernel to run.
import tilelang
import tilelang.language as T


@tilelang.jit
def ws_gemm(M, N, K, block_M=64, block_N=64, block_K=32, dtype="float16"):
    stages = 2

    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=256) as (bx, by):
            A_s = T.alloc_shared((stages, block_M, block_K), dtype)
            B_s = T.alloc_shared((stages, block_K, block_N), dtype)
            acc = T.alloc_fragment((block_M, block_N), "float32")
            bars = T.alloc_barrier([128] * (2 * stages))
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
                    T.gemm(A_s[1 - s, :, :], B_s[s, :, :], acc)
                    T.mbarrier_arrive(bars[s + stages])
            with T.ws(0):
                T.copy(acc, C[by * block_M, bx * block_N])

    return main

# Explicit warp specialization with TileLang's older barrier spelling: one list of barriers per
# kernel (T.create_list_of_mbarrier), each named by its index (mbarrier=i, or T.get_mbarrier(i)).
# Warp group 1 fills a ring of two stages with T.copy, warp group 0 runs the gemm on them; the
# loop is a ring, so tilec maps it onto T.Pipelined (src/gpu/ws_explicit.c). C must equal A @ B.
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[2])
def ws_list(M, N, K, block_M=128, block_N=128, block_K=64, dtype="float16"):
    stages = 2

    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=256) as (bx, by):
            A_ring = T.alloc_shared((stages, block_M, block_K), dtype)
            B_ring = T.alloc_shared((stages, block_K, block_N), dtype)
            acc = T.alloc_fragment((block_M, block_N), "float32")
            T.create_list_of_mbarrier([128] * (2 * stages))  # filled 0, 1; freed 2, 3
            with T.ws(0):
                T.clear(acc)
            for ko in range(T.ceildiv(K, block_K)):
                with T.ws(1):
                    T.mbarrier_wait_parity(mbarrier=ko % stages + stages, parity=((ko // stages) % 2) ^ 1)
                    T.copy(A[by * block_M:(by + 1) * block_M, ko * block_K:(ko + 1) * block_K], A_ring[ko % stages, :, :])
                    T.copy(B[ko * block_K:(ko + 1) * block_K, bx * block_N:(bx + 1) * block_N], B_ring[ko % stages, :, :])
                    T.mbarrier_arrive(mbarrier=ko % stages)
                with T.ws(0):
                    T.mbarrier_wait_parity(T.get_mbarrier(ko % stages), (ko // stages) % 2)
                    T.gemm(A_ring[ko % stages, :, :], B_ring[ko % stages, :, :], acc)
                    T.mbarrier_arrive(mbarrier=ko % stages + stages)
            with T.ws(0):
                T.copy(acc, C[by * block_M, bx * block_N])

    return main

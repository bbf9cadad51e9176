# A TileLang-style GEMM: shared tiles, a register accumulator, a software pipeline over K.
import numpy as np
import tilelang
import tilelang.language as T
from tilelang import PassConfigKey


def matmul(M, N, K, block_M, block_N, block_K, dtype=T.float16, accum_dtype=T.float32, num_stages=2):

    @T.prim_func
    def gemm(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), accum_dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            T.clear(C_local)
            for ko in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                T.copy(A[by * block_M, ko * block_K], A_shared)
                T.copy(B[ko * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C[by * block_M, bx * block_N])

    return gemm


def main():
    M, N, K = 128, 96, 160
    func = matmul(M, N, K, 64, 32, 32)
    kernel = tilelang.compile(func, out_idx=[2], target="cuda",
                              pass_configs={PassConfigKey.TL_DISABLE_TMA_LOWER: True,
                                            PassConfigKey.TL_DISABLE_WARP_SPECIALIZED: True})
    a = (np.random.rand(M, K) - 0.5).astype(np.float16)
    b = (np.random.rand(K, N) - 0.5).astype(np.float16)
    c = kernel(a, b)
    ref = a.astype(np.float32) @ b.astype(np.float32)
    np.testing.assert_allclose(c, ref, rtol=1e-3, atol=1e-3)
    print(f"gemm_pipelined {M}x{N}x{K}: ok")


if __name__ == "__main__":
    main()

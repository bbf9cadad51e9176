import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def kernel(M=256, N=256, block_M=64, block_N=64, dtype=T.float16):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_shared = T.alloc_shared((blockM, block_N), dtype)
            T.copy(A[by * block_M, bx * block_N], A_shared)
            T.copy(A_shared, B[by * block_M, bx * block_N])
    return main

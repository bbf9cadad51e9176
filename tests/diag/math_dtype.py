import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def kernel(M=256, N=256, block_M=64, block_N=64, dtype=T.float16):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            for i, j in T.Parallel(block_M, block_N):
                B[by * block_M + i, bx * block_N + j] = T.exp(i + j)
    return main

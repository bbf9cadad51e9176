# tilec: ir -D M=abc
# -D binds a word to a parameter annotated int, which has no default
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def kernel(M: int, N=256, block_M=64, block_N: int = 64, dtype=T.float16):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            T.clear(B[0:block_M, 0:block_N])
    return main

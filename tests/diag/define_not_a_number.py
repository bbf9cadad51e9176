# tilec: run -D M=abc
# -D binds a word to a parameter whose default is an int: the -D is named, not a tensor shape later
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def kernel(M=256, N=256, block_M=64, block_N=64, dtype=T.float16):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            T.clear(B[0:block_M, 0:block_N])
    return main

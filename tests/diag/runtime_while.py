import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def kernel(M=256, N=256, block_M=64, block_N=64, dtype=T.float16):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            i = T.alloc_var(T.int32, init=0)
            while i < 4:
                i = i + 1
    return main

# An f-string field that fails (found by the fuzz target: the partial string leaked).
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def kernel(M=200, N=256, block_M=64, block_N=64, dtype=T.float16):
    assert M % block_M == 0, f"M ({M}) must be a multiple of block_M ({blok_M})"

    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            T.clear(B[0:block_M, 0:block_N])

    return main

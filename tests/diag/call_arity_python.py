import tilelang
import tilelang.language as T


def tile_size(m, n):
    return m * n


@tilelang.jit
def kernel(M=256, block_M=64, dtype=T.float16):
    size = tile_size(M, block_M, 2)

    @T.prim_func
    def main(A: T.Tensor((M,), dtype)):
        with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
            T.clear(A[0:block_M])

    return main

# A mistake inside a kernel: tilec's diagnostic points at the script's own line and column.
import tilelang
import tilelang.language as T


def make(N, block=32):

    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(N, block), threads=32) as bx:
            tile = T.alloc_shared((block,), "float32")
            T.copy(A[bx * block], tile)
            T.copy(tile, B[bx * block:bx * block + 2 * block])

    return main


tilelang.compile(make(128), out_idx=[-1])
print("kernel_error: not reached")

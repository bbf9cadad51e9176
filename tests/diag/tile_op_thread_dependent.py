import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def kernel(M=256, block_M=64, dtype=T.float32):
    @T.prim_func
    def main(A: T.Tensor((M,), dtype), B: T.Tensor((M,), dtype)):
        with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
            S = T.alloc_shared((block_M,), dtype)
            tx = T.get_thread_binding(0)
            if tx % 2 == 0:  # not a range of threads: no warp-specialized branch
                T.copy(A[bx * block_M], S)
            T.copy(S, B[bx * block_M])

    return main

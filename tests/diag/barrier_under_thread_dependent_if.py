# tilec: ir --lowered
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def kernel(N=128, threads=64, dtype=T.float32):
    @T.prim_func
    def main(A: T.Tensor((N,), dtype), B: T.Tensor((N,), dtype)):
        with T.Kernel(T.ceildiv(N, threads), threads=threads) as bx:
            s = T.alloc_shared((threads + 1,), dtype)
            tx = T.get_thread_binding(0)
            if tx < 32:
                s[tx] = A[bx * threads + tx]
                B[bx * threads + tx] = s[tx + 1]

    return main

# tilelang.tools.cuda.iket (iket/minimal.py): intra-kernel event timing. iket.range opens a
# context that does nothing and marks and payloads record nothing: the result is the kernel's.
import tilelang
import tilelang.language as T
from tilelang.tools.cuda import iket


@tilelang.jit
def add(n, threads=128):
    @T.prim_func
    def main(A: T.Tensor((n,), "float32"), B: T.Tensor((n,), "float32"), C: T.Tensor((n,), "float32")):
        with T.Kernel(T.ceildiv(n, threads), threads=threads) as bx, iket.range("kernel_total"):
            iket.mark("block_enter", payload=iket.payload(bx, dtype="int32"))
            for i in T.Parallel(threads):
                idx = bx * threads + i
                if idx < n:
                    with iket.range("store"):
                        C[idx] = A[idx] + B[idx]
            iket.mark("block_exit")

    return main

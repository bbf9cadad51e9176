# tilec: source --target metal --kernel-only
import tilelang.language as T
@T.prim_func
def k(A: T.Tensor((64,), "float32"), B: T.Tensor((64,), "float32")):
    W = T.alloc_global((64,), "float32")
    with T.Kernel(1, threads=64) as bx:
        for i in T.Parallel(64):
            W[i] = A[i] * 2
    with T.Kernel(1, threads=64) as bx:
        for i in T.Parallel(64):
            B[i] = W[i] + 1

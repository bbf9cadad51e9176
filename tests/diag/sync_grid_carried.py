# tilec runs a kernel as one launch before a T.sync_grid and one after it; a block's buffers do
# not outlive a launch, so one used on both sides is refused.
import tilelang.language as T


@T.prim_func
def f(A: T.Tensor((64,), "float32"), B: T.Tensor((64,), "float32")):
    with T.Kernel(2, threads=32) as bx:
        S = T.alloc_shared((32,), "float32")
        for i in T.Parallel(32):
            S[i] = A[bx * 32 + i]
        T.sync_grid()
        for i in T.Parallel(32):
            B[bx * 32 + i] = S[i]

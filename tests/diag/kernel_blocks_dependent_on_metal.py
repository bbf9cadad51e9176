# tilec: source --target metal --kernel-only
# A 'with T.Kernel' block that reads what an earlier one writes is a second launch of the
# kernel; the cpu and cuda targets run it, metal does not yet.
import tilelang.language as T


@T.prim_func
def split_combine(A: T.Tensor((64,), "float32"), Partial: T.Tensor((4,), "float32"), Out: T.Tensor((1,), "float32")):
    with T.Kernel(4, threads=32) as bx:
        Partial[bx] = A[bx * 16]
    with T.Kernel(1, threads=32) as bx:
        Out[0] = Partial[0] + Partial[1] + Partial[2] + Partial[3]

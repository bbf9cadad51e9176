# The extent of A[bx, s:e] was folded through e = s + 16; assigning s later in the loop would break
# it on the next iteration.
import tilelang.language as T


@T.prim_func
def k(A: T.Tensor((4, 64), "float32"), B: T.Tensor((4, 64), "float32")):
    with T.Kernel(4, threads=32) as bx:
        S = T.alloc_shared((16,), "float32")
        s = bx * 0 + A[bx, 0].astype("int32")
        e = s + 16
        for i in T.serial(2):
            T.copy(A[bx, s:e], S)
            s = s + 1
        T.copy(S, B[bx, 0:16])

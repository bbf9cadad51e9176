# T.reinterpret keeps the width: float16 (16 bits) cannot be read as uint32.
import tilelang.language as T


@T.prim_func
def k(A: T.Tensor((4,), "float16"), B: T.Tensor((4,), "uint32")):
    with T.Kernel(1, threads=32) as bx:
        for i in T.Parallel(4):
            B[i] = T.reinterpret(A[i], T.uint32)

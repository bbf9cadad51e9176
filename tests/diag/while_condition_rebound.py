import tilelang.language as T
@T.prim_func
def k(A: T.Tensor((128,), "float32"), n: T.int32):
    with T.Kernel(1, threads=1) as bx:
        i = 0
        while i < n:
            A[i] = 1.0
            i = i + 1

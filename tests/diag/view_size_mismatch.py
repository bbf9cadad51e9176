import tilelang.language as T
@T.prim_func
def k(A: T.Tensor((128, 64), "float32")):
    with T.Kernel(1, threads=128) as bx:
        A_flat = T.Tensor((128 * 32,), "float32", A.data)

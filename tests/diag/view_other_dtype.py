import tilelang.language as T
@T.prim_func
def k(A: T.Tensor((128, 64), "float32")):
    with T.Kernel(1, threads=128) as bx:
        S = T.alloc_shared((128, 64), "bfloat16")
        S32 = T.view(S, shape=[64, 64], dtype="float32")

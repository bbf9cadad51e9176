import tilelang.language as T
@T.prim_func
def k(A: T.Tensor((128, 128), "float32")):
    with T.Kernel(1, threads=128) as bx:
        C_tmem = T.alloc_tmem([128, 128], "float32")

import tilelang.language as T
@T.prim_func
def k(A: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=256) as bx:
        # setmaxnreg takes a multiple of 8 between 24 and 256
        T.annotate_consumer_reg_alloc(250)
        T.clear(A)

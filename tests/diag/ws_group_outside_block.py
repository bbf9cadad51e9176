import tilelang.language as T
@T.prim_func
def k(A: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        with T.ws(1):
            T.clear(A)

import tilelang.language as T
@T.prim_func
def k(A: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=64) as bx:
        tx = T.get_thread_binding()
        if tx < 16:
            A[tx] = 1.0
            T.sync_threads(1, 32)
            A[tx] = 2.0

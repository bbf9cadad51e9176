import tilelang.language as T
@T.prim_func
def k(A: T.Tensor((256,), "float32")):
    with T.Kernel(1, threads=256) as bx:
        tx = T.get_thread_binding()
        with T.ws(1):
            # on a GPU only threads 128..255 run this; tilec runs a warp group's body as a whole
            A[tx] = 1.0

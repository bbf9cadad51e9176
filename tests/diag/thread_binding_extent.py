import tilelang.language as T
@T.prim_func
def k(A: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        # the launch has 128 threads along x; a narrower binding would change the block
        tx = T.thread_binding(0, 64, thread="threadIdx.x")
        A[tx] = 1.0

import tilelang.language as T
@T.prim_func
def k(A: T.Tensor((32,), "float32"), B: T.Tensor((32,), "float32")):
    with T.Kernel(1, threads=32) as bx:
        tx = T.get_thread_binding(0)
        B[tx] = T.tvm_warp_shuffle(0x0000FFFF, A[tx], tx ^ 1, 32, 32)

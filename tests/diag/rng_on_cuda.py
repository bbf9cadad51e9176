# tilec: source --target cuda --kernel-only
import tilelang.language as T
@T.prim_func
def k(Out: T.Tensor((64,), "uint32")):
    with T.Kernel(1, threads=64) as bx:
        tx = T.get_thread_binding()
        T.rng_init(42, 0, tx)
        Out[tx] = T.rng_rand()

# tilec: source --target metal --kernel-only
import tilelang.language as T
@T.prim_func
def k(A: T.Tensor((128, 64), "float32"), B: T.Tensor((128, 64), "float32")):
    with T.Kernel(1, threads=256) as bx:
        S = T.alloc_shared((128, 64), "float32")
        ready = T.alloc_barrier(arrive_count=128)
        with T.ws(0):
            T.copy(A, S)
            T.barrier_arrive(ready)
        with T.ws(1):
            T.barrier_wait(ready, 0)
            T.copy(S, B)

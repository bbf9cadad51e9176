# tilec: run
import tilelang.language as T
@T.prim_func
def k(A: T.Tensor((128, 64), "float32"), B: T.Tensor((128, 64), "float32")):
    with T.Kernel(1, threads=256) as bx:
        S = T.alloc_shared((128, 64), "float32")
        ready = T.alloc_barrier(arrive_count=128)
        # the consumer comes first in program order: on a GPU it waits for the producer below
        with T.ws(1):
            T.barrier_wait(ready, 0)
            T.copy(S, B)
        with T.ws(0):
            T.copy(A, S)
            T.barrier_arrive(ready)

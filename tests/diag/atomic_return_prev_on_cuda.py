# tilec: source --target cuda --kernel-only
import tilelang.language as T
@T.prim_func
def k(Count: T.Tensor((1,), "int32"), Slot: T.Tensor((64,), "int32")):
    with T.Kernel(1, threads=64) as bx:
        tx = T.get_thread_binding()
        Slot[tx] = T.atomic_add(Count[0], 1, return_prev=True)

# tilec: source --target metal --kernel-only
import tilelang.language as T
@T.prim_func
def k(A: T.Tensor((64,), "float32"), B: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=64) as bx:
        if T.get_thread_binding() < 32:
            T.copy(A, B)

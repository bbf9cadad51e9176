# tilec: ir
import tilelang.language as T
@T.prim_func
def k(A: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=256) as bx:
        with T.ws(0):
            T.mbarrier_arrive(T.get_mbarrier(0))

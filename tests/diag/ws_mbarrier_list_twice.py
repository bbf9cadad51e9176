# tilec: ir
import tilelang.language as T
@T.prim_func
def k(A: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=256) as bx:
        T.create_list_of_mbarrier(128, 128)
        T.create_list_of_mbarrier([128])

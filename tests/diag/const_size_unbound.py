import tilelang
import tilelang.language as T

@T.prim_func
def k(A: T.Tensor((T.const("N"), 64), "float32")):
    with T.Kernel(1, threads=32) as bx:
        S = T.alloc_shared((T.const("N"), 64), "float32")
        T.copy(A, S)

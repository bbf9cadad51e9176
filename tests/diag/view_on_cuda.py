# tilec: source --target cuda --kernel-only
import tilelang.language as T
@T.prim_func
def k(A: T.Tensor((64, 64), "float32"), B: T.Tensor((64, 4, 16), "float32")):
    with T.Kernel(1, threads=128) as bx:
        s = T.alloc_fragment((64, 64), "float32")
        v = T.reshape(s, (64, 4, 16))
        T.copy(A, s)
        T.copy(v, B)

# tilec: source --target cuda --kernel-only
import tilelang.language as T
@T.prim_func
def k(A: T.Tensor((64,), "float32"), B: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=64) as bx:
        s = T.alloc_shared((64,), "float32")
        tx = T.get_thread_binding()
        i = T.alloc_var(T.int32)
        i = tx
        while i < 64:
            s[i] = A[i]
            B[i] = s[63 - i]
            i = i + 64

# T.tvm_thread_allreduce combines with the comm_reducer of an enclosing T.attr; without one it
# has no combine function.
import tilelang.language as T


@T.prim_func
def f(A: T.Tensor((32,), "float32"), B: T.Tensor((1,), "float32")):
    with T.Kernel(1, threads=32) as bx:
        tx = T.get_thread_binding(0)
        r = T.alloc_local((1,), "float32")
        T.evaluate(T.tvm_thread_allreduce(T.uint32(1), A[tx], True, r[0], tx, dtype="handle"))
        B[0] = r[0]

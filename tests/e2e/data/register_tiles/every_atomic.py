# A T.Parallel loop that writes a replicated register tile whole (each thread keeps all of it,
# so each thread runs every iteration) and adds to a global counter: the atomic must still
# happen once per iteration, not once per thread (it did, 32 times too many, on cuda and metal).
import tilelang.language as T


@T.prim_func
def every_atomic(X: T.Tensor((64,), "float32"), Y: T.Tensor((64,), "float32"), C: T.Tensor((1,), "float32")):
    with T.Kernel(1, threads=32) as bx:
        r = T.alloc_fragment((64,), "float32")
        for i in T.Parallel(64):
            r[i] = X[i] * 2.0
            T.atomic_add(C[0], 1.0)
        for i in T.Parallel(64):
            Y[i] = r[i]

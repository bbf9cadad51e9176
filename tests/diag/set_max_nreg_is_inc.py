# T.set_max_nreg(count, is_inc): is_inc is 1 (increase) or 0 (decrease).
import tilelang.language as T


@T.prim_func
def k(A: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        T.set_max_nreg(240, 2)
        for i in T.Parallel(64):
            A[i] = 0.0

# tilec: source --target cuda --kernel-only
import tilelang.language as T
@T.prim_func
def k(A: T.Tensor((128, 64), "float32"), B: T.Tensor((128, 64), "float32")):
    with T.Kernel(4, threads=128) as bx:
        row = T.alloc_var(T.int32)
        row = bx
        while row < 128:
            for j in T.Parallel(64):
                B[row, j] = A[row, j]
            row = row + 4

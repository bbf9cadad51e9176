# tilec: source --target cuda --kernel-only
import tilelang.language as T
@T.prim_func
def k(A: T.Tensor((128, 64), "float32"), B: T.Tensor((128, 64), "float32")):
    with T.Kernel(1, threads=128) as bx:
        S = T.alloc_fragment((128, 64), "float32")
        S3 = T.reshape(S, (128, 8, 8))
        T.copy(A, S)
        for i, j, h in T.Parallel(128, 8, 8):
            S3[i, j, h] = S3[i, j, h] * 2
        T.copy(S, B)

# tilec: source --target cuda,arch=sm_90a --kernel-only
import tilelang.language as T
@T.prim_func
def k(X: T.Tensor((128, 256), "float32"), Y: T.Tensor((128, 256), "float32")):
    with T.Kernel(1, threads=128):
        x = T.alloc_shared((128, 256), "float32")
        y = T.alloc_shared((128, 256), "float32")
        T.copy(X, x)
        T.copy(X, y)
        for i, j in T.Parallel(128, 256):
            Y[i, j] = x[i, j] + y[127 - i, j]

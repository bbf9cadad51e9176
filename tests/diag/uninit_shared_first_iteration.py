# tilec: ir
# A state tile stored at the top of each step and written at its bottom: the first step stores
# shared memory nothing wrote (TileLang's gdn chunk_delta_h without an initial state).
import tilelang.language as T
@T.prim_func
def k(X: T.Tensor((4, 64, 32), "float16"), H: T.Tensor((4, 64, 32), "float16")):
    with T.Kernel(1, threads=128) as bx:
        h_s = T.alloc_shared((64, 32), "float16")
        h = T.alloc_fragment((64, 32), "float32")
        T.clear(h)
        for t in T.serial(4):
            T.copy(h_s, H[t, :, :])
            for i, j in T.Parallel(64, 32):
                h[i, j] += X[t, i, j]
            T.copy(h, h_s)

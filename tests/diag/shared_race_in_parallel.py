# tilec: source --target cuda,arch=sm_80 --kernel-only
# Row sums into shared memory from a T.Parallel loop: the iterations of one row run on several
# threads at once, each adding into the same element. The reference runs them in order; a GPU
# loses updates. Refused (the emulators, whose threads switch only at barriers, cannot show it).
import tilelang.language as T


@T.prim_func
def shared_race(X: T.Tensor((16, 32), "float32"), Y: T.Tensor((16,), "float32")):
    with T.Kernel(1, threads=64) as bx:
        s = T.alloc_shared((16,), "float32")
        x = T.alloc_shared((16, 32), "float32")
        T.copy(X, x)
        T.fill(s, 0)
        for r, c in T.Parallel(16, 32):
            s[r] += x[r, c]
        T.copy(s, Y)

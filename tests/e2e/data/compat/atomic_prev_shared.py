# T.atomic_add(dst, v, return_prev=True) on shared int32, float32 and float16 counters (the GPU
# targets have no global workspaces yet, atomic_prev.py's): 64 threads each add 1 to each
# counter, so the values returned are 0..63 in some order, each once, and every bin of Hist
# counts 1 (Hist must equal Ref). On metal the float16 counter takes the compare-and-swap path.
import tilelang
import tilelang.language as T


@T.prim_func
def fetch_shared(Hist: T.Tensor((3, 64), "int32"), Ref: T.Tensor((3, 64), "int32")):
    with T.Kernel(1, threads=64) as bx:
        S = T.alloc_shared((1,), "int32")
        F = T.alloc_shared((1,), "float32")
        G = T.alloc_shared((2,), "float16")
        H = T.alloc_shared((3, 64), "int32")
        T.fill(S, 0)
        T.fill(F, 0)
        T.fill(G, 0)
        T.fill(H, 0)
        T.sync_threads()
        p0 = T.atomic_add(S[0], 1, return_prev=True)
        p1 = T.atomic_add(F[0], T.float32(1), return_prev=True)
        p2 = T.atomic_add(G[1], T.float16(1), return_prev=True)
        T.atomic_add(H[0, p0], 1)
        T.atomic_add(H[1, T.cast(p1, "int32")], 1)
        T.atomic_add(H[2, T.cast(p2, "int32")], 1)
        T.sync_threads()
        for i, j in T.Parallel(3, 64):
            Hist[i, j] = H[i, j]
            Ref[i, j] = 1

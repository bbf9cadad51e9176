# T.atomic_add(dst, v, return_prev=True): the element's value before this thread's addition
# (topk_selector.py takes output slots so). 64 threads each add 1 to a shared counter, to a
# global int32 and to a global float32 counter (T.alloc_global workspaces, which start at
# zero): the values returned must be 0..63 in some order, each once, so every bin of Hist
# counts 1 (Hist must equal Ref).
import tilelang
import tilelang.language as T


@T.prim_func
def fetch(Hist: T.Tensor((3, 64), "int32"), Ref: T.Tensor((3, 64), "int32")):
    G = T.alloc_global((1,), "int32")
    F = T.alloc_global((1,), "float32")
    with T.Kernel(1, threads=64) as bx:
        S = T.alloc_shared((1,), "int32")
        H = T.alloc_shared((3, 64), "int32")
        T.fill(S, 0)
        T.fill(H, 0)
        T.sync_threads()
        p0 = T.atomic_add(S[0], 1, return_prev=True)
        p1 = T.atomic_add(G[0], 1, return_prev=True)
        p2 = T.atomic_add(F[0], T.float32(1), return_prev=True)
        T.atomic_add(H[0, p0], 1)
        T.atomic_add(H[1, p1], 1)
        T.atomic_add(H[2, T.cast(p2, "int32")], 1)
        T.sync_threads()
        for i, j in T.Parallel(3, 64):
            Hist[i, j] = H[i, j]
            Ref[i, j] = 1

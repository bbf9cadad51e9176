# TileLang's reducers: T.alloc_reducer (legacy in-place form with replication=, and the v2
# form with T.reducer_init / T.reducer_update / T.finalize_reducer(acc, dst)). A GPU keeps a
# replica per thread and combines them when finalizing; the reference keeps one copy updated
# in program order, which holds the same combination. Sum, MaxRow and MinRow must equal the
# T.reduce_sum / T.reduce_max / T.reduce_min results in Ref*.
import tilelang
import tilelang.language as T

M, N = 32, 48


@T.prim_func
def reducers(A: T.Tensor((M, N), "float32"), Sum: T.Tensor((M,), "float32"), MaxRow: T.Tensor((M,), "float32"),
             MinRow: T.Tensor((M,), "int32"), RefSum: T.Tensor((M,), "float32"), RefMax: T.Tensor((M,), "float32"),
             RefMin: T.Tensor((M,), "int32")):
    with T.Kernel(1, threads=128) as bx:
        a = T.alloc_fragment((M, N), "float32")
        ai = T.alloc_fragment((M, N), "int32")
        T.copy(A, a)
        for i, j in T.Parallel(M, N):
            ai[i, j] = T.cast(a[i, j] * 100, "int32")
        s = T.alloc_reducer(M, "float32", replication="all")
        T.clear(s)
        for i, j in T.Parallel(M, N):
            s[i] += a[i, j]
        T.finalize_reducer(s)
        T.copy(s, Sum)
        mx = T.alloc_reducer((M,), "float32", op="max")
        T.reducer_init(mx)
        for i, j in T.Parallel(M, N):
            T.reducer_update(mx[i], a[i, j])
        mx_out = T.alloc_fragment((M,), "float32")
        T.finalize_reducer(mx, mx_out)
        T.copy(mx_out, MaxRow)
        mn = T.alloc_reducer((M,), "int32", op="min")
        T.reducer_init(mn)
        for i, j in T.Parallel(M, N):
            T.reducer_update(mn[i], ai[i, j])
        mn_out = T.alloc_fragment((M,), "int32")
        T.finalize_reducer(mn, mn_out)
        T.copy(mn_out, MinRow)
        r = T.alloc_fragment((M,), "float32")
        T.reduce_sum(a, r, dim=1)
        T.copy(r, RefSum)
        T.reduce_max(a, r, dim=1)
        T.copy(r, RefMax)
        ri = T.alloc_fragment((M,), "int32")
        T.reduce_min(ai, ri, dim=1)
        T.copy(ri, RefMin)

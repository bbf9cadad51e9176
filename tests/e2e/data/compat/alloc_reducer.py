# T.alloc_reducer's legacy form (replication="all" / "none", op sum / max / min) updated from
# T.Parallel loops that cover more than the reducer's shape, then T.finalize_reducer in place.
# Several iterations of such a loop, run by several threads, combine into one element: the GPU
# lowering gives each thread's copy the op's identity, combines the copies after the loop and
# folds them into the value from before it, so every output equals the reference's, which
# updates its one copy in program order. Row sums of a matrix-vector product over column
# panels (a pipelined loop), column maxima, row minima of an int32 matrix, a subtraction, and a
# reducer updated from shared memory only (no fragment to follow).
import tilelang
import tilelang.language as T


@tilelang.jit
def row_dot_panels(w, v, rows=64, panel=32, threads=128, acc_t: T.dtype = T.float32):
    R, C = T.const("R, C")
    w: T.Tensor((R, C), T.float16)
    v: T.Tensor((C,), T.float16)
    y = T.empty((R,), T.float32)
    ymax = T.empty((T.ceildiv(R, rows), 32), T.float32)
    imin = T.empty((R,), T.int32)
    neg = T.empty((R,), T.float32)
    sh = T.empty((R,), T.float32)
    with T.Kernel(T.ceildiv(R, rows), threads=threads) as br:
        acc = T.alloc_reducer(rows, acc_t, replication="all")
        low = T.alloc_reducer((rows,), T.int32, op="min", replication="none")
        dec = T.alloc_reducer(rows, acc_t, replication="all")
        T.clear(acc)
        T.fill(low, 1 << 30)
        T.fill(dec, 10.0)
        tile_s = T.alloc_shared((rows, panel), T.float16)
        tile = T.alloc_fragment((rows, panel), T.float16)
        vp = T.alloc_fragment((panel,), T.float16)
        for p in T.Pipelined(T.ceildiv(C, panel), num_stages=2):
            T.copy(w[br * rows, p * panel], tile_s)
            T.copy(tile_s, tile)
            T.copy(v[p * panel], vp)
            for r, c in T.Parallel(rows, panel):
                acc[r] += T.cast(tile[r, c], acc_t) * T.cast(vp[c], acc_t)
            for r, c in T.Parallel(rows, panel):
                low[r] = T.min(low[r], T.cast(tile[r, c] * 8.0, T.int32))
            for r, c in T.Parallel(rows, panel):
                dec[r] -= T.abs(T.cast(tile[r, c], acc_t))
        T.finalize_reducer(acc)
        T.finalize_reducer(low)
        T.finalize_reducer(dec)
        T.copy(acc, y[br * rows])
        T.copy(low, imin[br * rows])
        T.copy(dec, neg[br * rows])
        # column maxima of the first 32 columns of this block's rows: the reducer follows no fragment of the loop
        big = T.alloc_reducer((32,), T.float32, op="max", replication="all")
        T.fill(big, -1e30)
        whole = T.alloc_shared((rows, 32), T.float16)
        T.copy(w[br * rows, 0], whole)
        for r, c in T.Parallel(rows, 32):
            big[c] = T.max(big[c], T.cast(whole[r, c], T.float32))
        T.finalize_reducer(big)
        T.copy(big, ymax[br, 0])
        # a sum of shared values into a reducer
        part = T.alloc_reducer((rows,), T.float32, replication="all")
        T.clear(part)
        for r, c in T.Parallel(rows, 32):
            part[r] += T.cast(whole[r, c], T.float32)
        T.finalize_reducer(part)
        T.copy(part, sh[br * rows])
    return y, ymax, imin, neg, sh

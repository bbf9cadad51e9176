# Buffer views: T.Tensor(shape, dtype, X.data) of a global tensor, T.reshape of a fragment and
# T.view of a shared buffer name the same storage with another shape (row-major). R and B are
# computed through views, S and C the same values without them: the test compares them.
import tilelang
import tilelang.language as T

dtype = "int32"


@T.prim_func
def views(
    X: T.Tensor((4, 2, 8, 16), dtype),
    B: T.Tensor((64, 16), dtype),
    R: T.Tensor((64, 4), dtype),
    C: T.Tensor((64, 16), dtype),
    S: T.Tensor((64, 4), dtype),
):
    with T.Kernel(2, threads=64) as bx:
        X_rows = T.Tensor((64, 16), dtype, X.data)  # row r is X[r // 16, r // 8 % 2, r % 8, :]
        B_flat = T.Tensor((1024,), dtype, B.data)
        tile = T.alloc_shared((32, 16), dtype)
        tile_pairs = T.view(tile, shape=[16, 32])
        frag = T.alloc_fragment((32, 16), dtype)
        grouped = T.reshape(frag, (32, 4, 4))
        sums = T.alloc_fragment((32, 4), dtype)
        T.copy(X_rows[bx * 32, 0], tile)
        for p, q in T.Parallel(16, 32):
            tile_pairs[p, q] = tile_pairs[p, q] + q // 16
        T.copy(tile, frag)
        for i, g, h in T.Parallel(32, 4, 4):
            grouped[i, g, h] = grouped[i, g, h] * (h + 1)
        T.reduce_sum(grouped, sums, dim=2)
        T.copy(sums, R[bx * 32, 0])
        for i, j in T.Parallel(32, 16):
            B_flat[(bx * 32 + i) * 16 + j] = frag[i, j]
        # the same values, element by element from X
        for i, j in T.Parallel(32, 16):
            r = bx * 32 + i
            C[r, j] = (X[r // 16, r // 8 % 2, r % 8, j] + i % 2) * (j % 4 + 1)
        for i, g in T.Parallel(32, 4):
            r = bx * 32 + i
            S[r, g] = (
                (X[r // 16, r // 8 % 2, r % 8, g * 4] + i % 2)
                + (X[r // 16, r // 8 % 2, r % 8, g * 4 + 1] + i % 2) * 2
                + (X[r // 16, r // 8 % 2, r % 8, g * 4 + 2] + i % 2) * 3
                + (X[r // 16, r // 8 % 2, r % 8, g * 4 + 3] + i % 2) * 4
            )

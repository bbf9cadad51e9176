# A reduction and a prefix sum over dimension 1 of tiles whose dimension 0 has extent 1 (gdn's
# (1, block_S) chunks, kda's row tiles). The GPU lowering walks tiles with their extent-1
# dimensions dropped, so dimension 1 of a (1, 4, 8) tile is the first dimension it walks; it once
# took the second and reduced the wrong one (cuda and metal gave wrong results, the cpu right).
import tilelang
import tilelang.language as T


@T.prim_func
def unit_dim_reduce(A: T.Tensor((1, 4, 8), "float32"), S: T.Tensor((1, 8), "float32"), M: T.Tensor((1, 8), "float32"),
                    C: T.Tensor((1, 4, 8), "float32"), R: T.Tensor((1, 32), "float32")):
    with T.Kernel(1, threads=32):
        a = T.alloc_fragment((1, 4, 8), "float32")
        s = T.alloc_fragment((1, 8), "float32")
        m = T.alloc_fragment((1, 8), "float32")
        T.copy(A, a)
        T.reduce_sum(a, s, dim=1)
        T.reduce_max(a, m, dim=-2)
        T.copy(s, S)
        T.copy(m, M)
        T.cumsum(a, dim=1)
        T.copy(a, C)
        r = T.alloc_shared((1, 32), "float32")
        for i, j in T.Parallel(4, 8):
            r[0, i * 8 + j] = A[0, i, j]
        T.cumsum(r, dim=1, reverse=True)
        T.copy(r, R)

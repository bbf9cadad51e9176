# Shared tiles allocated inside a T.Pipelined body (deepseek_mhc's mhc_pre gemm+sqrsum does
# this): the staged tiles must live across the whole pipeline, since the prologue fills stages
# before the loop. Once a GPU lowering error ("buffer ... used outside its scope").
# Y = X @ W^T over K in tiles of 64, and S = the row sums of X*X, both accumulated per tile.
import tilelang
import tilelang.language as T

M = 64
N = 64
K = 256
stages = 2


@T.prim_func
def gemm_sqrsum(X: T.Tensor((M, K), "float16"), W: T.Tensor((N, K), "float16"), Y: T.Tensor((M, N), "float32"), S: T.Tensor((M,), "float32")):
    with T.Kernel(T.ceildiv(M, 32), threads=128) as bx:
        acc = T.alloc_fragment((32, N), "float32")
        sq = T.alloc_fragment((32, 64), "float32")
        T.clear(acc)
        T.clear(sq)
        for ko in T.Pipelined(K // 64, num_stages=stages):
            Xs = T.alloc_shared((32, 64), "float16")
            Ws = T.alloc_shared((N, 64), "float16")
            T.copy(X[bx * 32, ko * 64], Xs)
            T.copy(W[0, ko * 64], Ws)
            Xf = T.alloc_fragment((32, 64), "float32")
            T.copy(Xs, Xf)
            for i, j in T.Parallel(32, 64):
                sq[i, j] += Xf[i, j] * Xf[i, j]
            T.gemm(Xs, Ws, acc, transpose_B=True)
        s = T.alloc_fragment((32,), "float32")
        T.reduce_sum(sq, s, dim=1)
        T.copy(acc, Y[bx * 32, 0])
        for i in T.Parallel(32):
            S[bx * 32 + i] = s[i]

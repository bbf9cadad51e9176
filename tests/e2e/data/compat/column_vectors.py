# Column vectors beside a gemm accumulator (a mask or a bias per key, `s[i, j] + bias[j]`): each
# thread holds only the columns of the accumulator it holds (in GQA decoding's 64 x 128 score
# tile, 32 of the 128, indexed by constants; they were all 128, indexed at run time). Warp
# partitions along N (wn > 1), a block with more warps than the tile (replicated accumulator),
# and a vector the kernel also writes in a loop of its own.
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def scaled_scores(M=64, N=128, K=64, threads=128, full_col=False):
    policy = T.GemmWarpPolicy.FullCol if full_col else T.GemmWarpPolicy.FullRow

    @T.prim_func
    def main(Q: T.Tensor((M, K), "float16"), Kt: T.Tensor((N, K), "float16"), bias: T.Tensor((N,), "float32"),
             keep: T.Tensor((N,), "uint8"), O: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=threads) as bx:
            q_s = T.alloc_shared((M, K), "float16")
            k_s = T.alloc_shared((N, K), "float16")
            s = T.alloc_fragment((M, N), "float32")
            b_f = T.alloc_fragment((N,), "float32")
            keep_f = T.alloc_fragment((N,), "uint8")
            T.copy(Q, q_s)
            T.copy(Kt, k_s)
            T.copy(keep, keep_f)
            T.copy(bias, b_f)
            T.clear(s)
            T.gemm(q_s, k_s, s, transpose_B=True, policy=policy)
            for i, j in T.Parallel(M, N):
                s[i, j] = T.if_then_else(keep_f[j] != 0, s[i, j] + b_f[j], -1.0)
            for j in T.Parallel(N):
                b_f[j] = b_f[j] * 2.0
            for i, j in T.Parallel(M, N):
                s[i, j] = s[i, j] - b_f[j]
            T.copy(s, O)

    return main

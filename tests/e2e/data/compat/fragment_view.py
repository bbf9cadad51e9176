# A view of a gemm's accumulator (T.reshape) that splits its last dimension, as DeepSeek V3.2's
# lightning indexer writes it: s holds block_N x (block_Q * heads) scores, s_reshaped the same
# registers as block_N x block_Q x heads, a T.Parallel loop over the view weighs each head and a
# T.reduce_sum over its last dimension sums the heads of each query. The GPU lowering reads the
# view as the accumulator itself (src/gpu/views.c).
import tilelang
import tilelang.language as T


@tilelang.jit
def head_weighted_logits(N=64, Q=4, H=16, D=64, threads=128):

    @T.prim_func
    def main(K: T.Tensor((N, D), T.float16), Qm: T.Tensor((Q * H, D), T.float16), W: T.Tensor((Q, H), T.float32),
             Out: T.Tensor((N, Q), T.float32)):
        with T.Kernel(1, threads=threads) as bx:
            k = T.alloc_shared((N, D), T.float16)
            q = T.alloc_shared((Q * H, D), T.float16)
            s = T.alloc_fragment((N, Q * H), T.float32)
            s_reshaped = T.reshape(s, (N, Q, H))
            weights = T.alloc_fragment((Q, H), T.float32)
            logits = T.alloc_fragment((N, Q), T.float32)
            T.copy(K, k)
            T.copy(Qm, q)
            T.copy(W, weights)
            T.gemm(k, q, s, transpose_B=True, clear_accum=True)
            for n, qi, h in T.Parallel(N, Q, H):
                s_reshaped[n, qi, h] = T.max(s_reshaped[n, qi, h], 0) * weights[qi, h]
            T.reduce_sum(s_reshaped, logits, dim=-1, clear=True)
            T.copy(logits, Out)
    return main

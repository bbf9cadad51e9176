# A decode step of attention over a latent cache, shaped like DeepSeek's MLA decode (one query
# row per head, all heads of a group in one block, a cache shared by the heads): the score is
# Q K^T plus a rotary part Q_pe K_pe^T, the softmax runs over the cache in blocks, and the cache
# block itself is the V of the second gemm. At dim=512 with 64-row tiles and two pipeline stages
# its shared tiles fit an H100 only when the output tile takes the memory of tiles dead after the
# loop and the row reductions across 8 warps take one scratch slot per warp and row (tilec
# refused it for sm_90a, 237,568 bytes against 232,448: tests/e2e/cuda.sh checks the plan).
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def latent_decode(batch=1, heads=64, seq=256, dim=128, pe_dim=32, block_N=32, block_H=64, stages=2, dtype="float16"):
    scale = 1.0 / (dim + pe_dim) ** 0.5 * 1.44269504
    accum = "float32"

    @T.prim_func
    def main(Q: T.Tensor((batch, heads, dim), dtype), Q_pe: T.Tensor((batch, heads, pe_dim), dtype),
             KV: T.Tensor((batch, seq, dim), dtype), K_pe: T.Tensor((batch, seq, pe_dim), dtype),
             Out: T.Tensor((batch, heads, dim), dtype)):
        with T.Kernel(heads // block_H, batch, threads=256) as (hx, b):
            q_s = T.alloc_shared((block_H, dim), dtype)
            qpe_s = T.alloc_shared((block_H, pe_dim), dtype)
            kv_s = T.alloc_shared((block_N, dim), dtype)
            kpe_s = T.alloc_shared((block_N, pe_dim), dtype)
            p_s = T.alloc_shared((block_H, block_N), dtype)
            o_s = T.alloc_shared((block_H, dim), dtype)
            s = T.alloc_fragment((block_H, block_N), accum)
            o = T.alloc_fragment((block_H, dim), accum)
            m = T.alloc_fragment((block_H,), accum)
            m_old = T.alloc_fragment((block_H,), accum)
            rescale = T.alloc_fragment((block_H,), accum)
            row_sum = T.alloc_fragment((block_H,), accum)
            denom = T.alloc_fragment((block_H,), accum)
            T.copy(Q[b, hx * block_H:(hx + 1) * block_H, :], q_s)
            T.copy(Q_pe[b, hx * block_H:(hx + 1) * block_H, :], qpe_s)
            T.fill(o, 0)
            T.fill(denom, 0)
            T.fill(m, -T.infinity(accum))
            for k in T.Pipelined(T.ceildiv(seq, block_N), num_stages=stages):
                T.copy(KV[b, k * block_N:(k + 1) * block_N, :], kv_s)
                T.copy(K_pe[b, k * block_N:(k + 1) * block_N, :], kpe_s)
                T.gemm(q_s, kv_s, s, transpose_B=True, policy=T.GemmWarpPolicy.FullCol, clear_accum=True)
                T.gemm(qpe_s, kpe_s, s, transpose_B=True, policy=T.GemmWarpPolicy.FullCol)
                T.copy(m, m_old)
                T.reduce_max(s, m, dim=1, clear=False)
                for i in T.Parallel(block_H):
                    rescale[i] = T.exp2((m_old[i] - m[i]) * scale)
                for i, j in T.Parallel(block_H, block_N):
                    s[i, j] = T.exp2((s[i, j] - m[i]) * scale)
                T.reduce_sum(s, row_sum, dim=1)
                T.copy(s, p_s)
                for i in T.Parallel(block_H):
                    denom[i] = denom[i] * rescale[i] + row_sum[i]
                for i, j in T.Parallel(block_H, dim):
                    o[i, j] *= rescale[i]
                T.gemm(p_s, kv_s, o, policy=T.GemmWarpPolicy.FullCol)
            for i, j in T.Parallel(block_H, dim):
                o[i, j] /= denom[i]
            T.copy(o, o_s)
            T.copy(o_s, Out[b, hx * block_H:(hx + 1) * block_H, :])

    return main

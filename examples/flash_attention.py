"""FlashAttention forward pass, O = softmax(Q K^T / sqrt(dim)) V, layout (batch, heads, seq, dim).

`is_causal` is a compile-time flag: the Python `if is_causal:` inside the kernel picks the masking
code when the kernel is built, and the causal variant also stops the K/V loop at the diagonal.
Only the blocks that need it are masked: those crossing the diagonal (causal) or the end of the
sequence (a run-time test in the loop).
The softmax is computed online, block by block, with exp2 and a pre-multiplied log2(e) scale.
"""
import argparse

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[3], pass_configs={tilelang.PassConfigKey.TL_ENABLE_FAST_MATH: True})
def flashattn(batch=1, heads=2, seq_len=128, dim=64, is_causal=True, block_M=64, block_N=64, num_stages=1, threads=128, dtype=T.float16):
    scale = (1.0 / dim) ** 0.5 * 1.44269504  # 1/sqrt(dim) * log2(e)
    shape = [batch, heads, seq_len, dim]
    accum_dtype = T.float32

    @T.prim_func
    def main(
        Q: T.Tensor(shape, dtype),
        K: T.Tensor(shape, dtype),
        V: T.Tensor(shape, dtype),
        Output: T.Tensor(shape, dtype),
    ):
        with T.Kernel(T.ceildiv(seq_len, block_M), heads, batch, threads=threads) as (bx, by, bz):
            Q_shared = T.alloc_shared((block_M, dim), dtype)
            K_shared = T.alloc_shared((block_N, dim), dtype)
            V_shared = T.alloc_shared((block_N, dim), dtype)
            O_shared = T.alloc_shared((block_M, dim), dtype)
            acc_s = T.alloc_fragment((block_M, block_N), accum_dtype)
            acc_s_cast = T.alloc_fragment((block_M, block_N), dtype)
            acc_o = T.alloc_fragment((block_M, dim), accum_dtype)
            scores_max = T.alloc_fragment((block_M,), accum_dtype)
            scores_max_prev = T.alloc_fragment((block_M,), accum_dtype)
            scores_scale = T.alloc_fragment((block_M,), accum_dtype)
            scores_sum = T.alloc_fragment((block_M,), accum_dtype)
            logsum = T.alloc_fragment((block_M,), accum_dtype)

            T.copy(Q[bz, by, bx * block_M:(bx + 1) * block_M, :], Q_shared)
            T.fill(acc_o, 0)
            T.fill(logsum, 0)
            T.fill(scores_max, -T.infinity(accum_dtype))

            loop_range = (
                T.min(T.ceildiv(seq_len, block_N), T.ceildiv((bx + 1) * block_M, block_N))
                if is_causal
                else T.ceildiv(seq_len, block_N)
            )

            for k in T.Pipelined(loop_range, num_stages=num_stages):
                T.copy(K[bz, by, k * block_N:(k + 1) * block_N, :], K_shared)
                T.gemm(Q_shared, K_shared, acc_s, transpose_B=True, clear_accum=True, policy=T.GemmWarpPolicy.FullRow)
                if is_causal:
                    # Only a block that crosses the diagonal has keys after some of its queries.
                    if k * block_N + block_N - 1 > bx * block_M:
                        for i, j in T.Parallel(block_M, block_N):
                            acc_s[i, j] = T.if_then_else(bx * block_M + i >= k * block_N + j, acc_s[i, j], -T.infinity(accum_dtype))
                elif seq_len % block_N != 0:
                    # Keys past the end of the sequence (zeros read out of bounds) must not count;
                    # only the last block has any.
                    if k * block_N + block_N > seq_len:
                        for i, j in T.Parallel(block_M, block_N):
                            acc_s[i, j] = T.if_then_else(k * block_N + j < seq_len, acc_s[i, j], -T.infinity(accum_dtype))

                T.copy(scores_max, scores_max_prev)
                T.fill(scores_max, -T.infinity(accum_dtype))
                T.reduce_max(acc_s, scores_max, dim=1, clear=False)
                for i in T.Parallel(block_M):
                    scores_max[i] = T.max(scores_max[i], scores_max_prev[i])
                for i in T.Parallel(block_M):
                    scores_scale[i] = T.exp2(scores_max_prev[i] * scale - scores_max[i] * scale)
                for i, j in T.Parallel(block_M, block_N):
                    acc_s[i, j] = T.exp2(acc_s[i, j] * scale - scores_max[i] * scale)
                T.reduce_sum(acc_s, scores_sum, dim=1)
                for i in T.Parallel(block_M):
                    logsum[i] = logsum[i] * scores_scale[i] + scores_sum[i]
                T.copy(acc_s, acc_s_cast)

                for i, j in T.Parallel(block_M, dim):
                    acc_o[i, j] *= scores_scale[i]
                T.copy(V[bz, by, k * block_N:(k + 1) * block_N, :], V_shared)
                T.gemm(acc_s_cast, V_shared, acc_o, policy=T.GemmWarpPolicy.FullRow)

            for i, j in T.Parallel(block_M, dim):
                acc_o[i, j] /= logsum[i]
            T.copy(acc_o, O_shared)
            T.copy(O_shared, Output[bz, by, bx * block_M:(bx + 1) * block_M, :])

    return main


def ref_program(Q, K, V, is_causal):
    import torch
    import torch.nn.functional as F

    dim = Q.size(-1)
    scores = torch.einsum("bhqd,bhkd->bhqk", Q.float(), K.float()) / dim**0.5
    if is_causal:
        seq_len = Q.size(2)
        mask = torch.tril(torch.ones(seq_len, seq_len, device=scores.device))
        scores = scores.masked_fill(mask == 0, float("-inf"))
    return torch.einsum("bhqk,bhkd->bhqd", F.softmax(scores, dim=-1), V.float()).to(Q.dtype)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--heads", type=int, default=32)
    parser.add_argument("--seq_len", type=int, default=4096)
    parser.add_argument("--dim", type=int, default=128)
    parser.add_argument("--is_causal", action="store_true")
    args = parser.parse_args()

    import torch

    kernel = flashattn(args.batch, args.heads, args.seq_len, args.dim, args.is_causal)
    shape = (args.batch, args.heads, args.seq_len, args.dim)
    q, k, v = (torch.randn(shape, device="cuda", dtype=torch.float16) for _ in range(3))
    torch.testing.assert_close(kernel(q, k, v), ref_program(q, k, v, args.is_causal), rtol=1e-2, atol=1e-2)
    print("flash attention: all checks pass")


if __name__ == "__main__":
    main()

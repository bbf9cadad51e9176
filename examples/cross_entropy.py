"""Cross-entropy loss per row of a logits matrix: loss[i] = logsumexp(X[i, :]) - X[i, label[i]],
and 0 for rows whose label is ignore_index (padding tokens).

A block owns block_M rows and streams the vocabulary in tiles with an online maximum and sum.
The target logit is gathered with a data-dependent index (X[row, Labels[row]]). The defaults
V = 1000 (vocabulary) and M = 50 (rows) are NOT multiples of block_V = 256 and block_M = 16.
"""
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def cross_entropy(M=50, V=1000, block_M=16, block_V=256, ignore_index=-100, threads=128, dtype=T.float32):
    accum_dtype = T.float32
    log2e = 1.4426950408889634
    num_tiles = int(T.ceildiv(V, block_V))
    assert 1 <= num_tiles <= 1 << 20 and ignore_index < 0

    @T.prim_func
    def main(
        X: T.Tensor((M, V), dtype),
        Labels: T.Tensor((M,), T.int32),
        Loss: T.Tensor((M,), accum_dtype),
    ):
        with T.Kernel(T.ceildiv(M, block_M), threads=threads) as bx:
            x = T.alloc_fragment((block_M, block_V), accum_dtype)
            row_max = T.alloc_fragment((block_M,), accum_dtype)
            prev_max = T.alloc_fragment((block_M,), accum_dtype)
            row_sum = T.alloc_fragment((block_M,), accum_dtype)

            T.fill(row_max, -T.infinity(accum_dtype))
            T.clear(row_sum)
            for t in T.Serial(num_tiles):
                T.copy(X[bx * block_M, t * block_V], x)
                for i, j in T.Parallel(block_M, block_V):
                    x[i, j] = T.if_then_else(t * block_V + j < V, x[i, j], -T.infinity(accum_dtype))
                T.copy(row_max, prev_max)
                T.reduce_max(x, row_max, dim=1, clear=False)
                for i, j in T.Parallel(block_M, block_V):
                    x[i, j] = T.exp2((x[i, j] - row_max[i]) * log2e)
                for i in T.Parallel(block_M):
                    row_sum[i] *= T.exp2((prev_max[i] - row_max[i]) * log2e)
                T.reduce_sum(x, row_sum, dim=1, clear=False)

            for i in T.Parallel(block_M):
                row = bx * block_M + i
                if row < M:
                    label = Labels[row]
                    if label == ignore_index:
                        Loss[row] = 0
                    else:
                        Loss[row] = row_max[i] + T.log2(row_sum[i]) / log2e - X[row, label]

    return main


def ref_program(x, labels, ignore_index=-100):
    import torch

    return torch.nn.functional.cross_entropy(x.float(), labels.long(), ignore_index=ignore_index, reduction="none")


if __name__ == "__main__":
    import torch

    kernel = cross_entropy(M=8192, V=32000)
    x = torch.randn(8192, 32000, device="cuda")
    labels = torch.randint(0, 32000, (8192,), device="cuda", dtype=torch.int32)
    labels[::7] = -100
    torch.testing.assert_close(kernel(x, labels), ref_program(x, labels), rtol=1e-4, atol=1e-4)
    print("cross entropy: all checks pass")

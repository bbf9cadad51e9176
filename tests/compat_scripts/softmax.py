# A TileLang-style row softmax: reductions into fragments, a symbolic number of rows.
import numpy as np
import tilelang
import tilelang.language as T

rows = T.symbolic("rows")


@tilelang.jit(out_idx=-1)
def softmax(N, block_rows=4, dtype="float32"):
    scale = 1.44269504  # log2(e)

    @T.prim_func
    def main(X: T.Tensor((rows, N), dtype), Y: T.Tensor((rows, N), dtype)):
        with T.Kernel(T.ceildiv(rows, block_rows), threads=128) as bx:
            x = T.alloc_fragment((block_rows, N), dtype)
            row_max = T.alloc_fragment((block_rows,), dtype)
            row_sum = T.alloc_fragment((block_rows,), dtype)
            T.copy(X[bx * block_rows, 0], x)
            T.reduce_max(x, row_max, dim=1)
            for i, j in T.Parallel(block_rows, N):
                x[i, j] = T.exp2((x[i, j] - row_max[i]) * scale)
            T.reduce_sum(x, row_sum, dim=1)
            for i, j in T.Parallel(block_rows, N):
                x[i, j] = x[i, j] / row_sum[i]
            T.copy(x, Y[bx * block_rows, 0])

    return main


def ref_softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


if __name__ == "__main__":
    kernel = softmax(64)
    for m in (8, 37):  # one kernel, any number of rows
        x = np.random.randn(m, 64).astype(np.float32)
        y = kernel(x)
        np.testing.assert_allclose(y, ref_softmax(x), rtol=1e-4, atol=1e-5)
    print("softmax: ok")

"""Linear layer with a run-time batch dimension: Y = X @ W + bias, X (M, K), W (K, N).

M is declared with T.dynamic, so it is a variable of the compiled kernel: one binary serves every
number of rows (tokens), and M is read from X's shape at launch. N and K stay compile-time.
The grid size T.ceildiv(M, block_M) is therefore a run-time expression.
"""
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def linear_dynamic_m(N=256, K=256, block_M=64, block_N=128, block_K=32, num_stages=2, threads=128,
                     dtype=T.float16, accum_dtype=T.float32):
    M = T.dynamic("m")

    @T.prim_func
    def main(
        X: T.Tensor((M, K), dtype),
        W: T.Tensor((K, N), dtype),
        bias: T.Tensor((N,), dtype),
        Y: T.Tensor((M, N), dtype),
    ):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            X_shared = T.alloc_shared((block_M, block_K), dtype)
            W_shared = T.alloc_shared((block_K, block_N), dtype)
            bias_shared = T.alloc_shared((block_N,), dtype)
            acc = T.alloc_fragment((block_M, block_N), accum_dtype)

            T.copy(bias[bx * block_N], bias_shared)
            T.clear(acc)
            for ko in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                T.copy(X[by * block_M, ko * block_K], X_shared)
                T.copy(W[ko * block_K, bx * block_N], W_shared)
                T.gemm(X_shared, W_shared, acc)
            for i, j in T.Parallel(block_M, block_N):
                acc[i, j] += bias_shared[j]
            T.copy(acc, Y[by * block_M, bx * block_N])

    return main


def ref_program(x, w, b):
    return (x.float() @ w.float() + b.float()).to(x.dtype)


if __name__ == "__main__":
    import torch

    kernel = linear_dynamic_m(N=1024, K=1024)
    w = torch.randn(1024, 1024, device="cuda", dtype=torch.float16)
    b = torch.randn(1024, device="cuda", dtype=torch.float16)
    for m in (1, 17, 300, 2048):
        x = torch.randn(m, 1024, device="cuda", dtype=torch.float16)
        torch.testing.assert_close(kernel(x, w, b), ref_program(x, w, b), rtol=1e-2, atol=1e-2)
    print("dynamic-M linear: all checks pass")

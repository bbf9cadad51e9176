"""RMSNorm: y = x / sqrt(mean(x^2) + eps) * weight, row by row.

float16 in and out, float32 statistics. A block normalises block_M whole rows. The default
M = 200 is NOT a multiple of block_M = 16: the last block reads zero rows past the end and its
stores there are dropped.
"""
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def rms_norm(M=200, N=256, block_M=16, eps=1e-6, threads=128, dtype=T.float16, accum_dtype=T.float32):

    @T.prim_func
    def main(
        X: T.Tensor((M, N), dtype),
        W: T.Tensor((N,), dtype),
        Y: T.Tensor((M, N), dtype),
    ):
        with T.Kernel(T.ceildiv(M, block_M), threads=threads) as bx:
            X_shared = T.alloc_shared((block_M, N), dtype)
            W_shared = T.alloc_shared((N,), dtype)
            X_local = T.alloc_fragment((block_M, N), accum_dtype)
            X_sq = T.alloc_fragment((block_M, N), accum_dtype)
            inv_rms = T.alloc_fragment((block_M,), accum_dtype)

            T.copy(X[bx * block_M, 0], X_shared)
            T.copy(W, W_shared)
            T.copy(X_shared, X_local)  # widens float16 -> float32
            for i, j in T.Parallel(block_M, N):
                X_sq[i, j] = X_local[i, j] * X_local[i, j]
            T.reduce_sum(X_sq, inv_rms, dim=1)
            for i in T.Parallel(block_M):
                inv_rms[i] = T.rsqrt(inv_rms[i] / N + eps)
            for i, j in T.Parallel(block_M, N):
                X_shared[i, j] = X_local[i, j] * inv_rms[i] * W_shared[j]
            T.copy(X_shared, Y[bx * block_M, 0])

    return main


def ref_program(x, w, eps=1e-6):
    import torch

    xf = x.float()
    return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps) * w.float()).to(x.dtype)


if __name__ == "__main__":
    import torch

    M, N = 8192, 4096
    kernel = rms_norm(M, N)
    x = torch.randn(M, N, device="cuda", dtype=torch.float16)
    w = torch.randn(N, device="cuda", dtype=torch.float16)
    torch.testing.assert_close(kernel(x, w), ref_program(x, w), rtol=1e-2, atol=1e-2)
    print("rms_norm: all checks pass")

"""Symmetric per-row int8 quantisation and its inverse, as one kernel:
scale[i] = max|X[i, :]| / 127, Q[i, j] = clamp(round_half_up(X[i, j] / scale[i]), -127, 127),
and the dequantised copy Xhat[i, j] = Q[i, j] * scale[i] (to measure the error).

Rounding is spelled T.floor(v + 0.5), so the float -> int8 cast only ever sees whole numbers in
range. Exercises int8 buffers, casts both ways, T.abs, T.floor and compile-time arithmetic on
the parameters. The default M = 100 is NOT a multiple of block_M = 32.
"""
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[1, 2, 3])
def quant_int8(M=100, N=256, block_M=32, threads=128, dtype=T.float16):
    accum_dtype = T.float32
    qmax = 2 ** (8 - 1) - 1  # 127
    assert 0 < block_M <= 128 and N % 2 == 0

    @T.prim_func
    def main(
        X: T.Tensor((M, N), dtype),
        Q: T.Tensor((M, N), T.int8),
        Scale: T.Tensor((M,), accum_dtype),
        Xhat: T.Tensor((M, N), dtype),
    ):
        with T.Kernel(T.ceildiv(M, block_M), threads=threads) as bx:
            x = T.alloc_fragment((block_M, N), accum_dtype)
            ax = T.alloc_fragment((block_M, N), accum_dtype)
            q = T.alloc_fragment((block_M, N), T.int8)
            xhat = T.alloc_fragment((block_M, N), dtype)
            amax = T.alloc_fragment((block_M,), accum_dtype)
            scale = T.alloc_fragment((block_M,), accum_dtype)

            T.copy(X[bx * block_M, 0], x)
            for i, j in T.Parallel(block_M, N):
                ax[i, j] = T.abs(x[i, j])
            T.reduce_max(ax, amax, dim=1)
            for i in T.Parallel(block_M):
                scale[i] = T.max(amax[i], 1e-8) / qmax
                if bx * block_M + i < M:
                    Scale[bx * block_M + i] = scale[i]
            for i, j in T.Parallel(block_M, N):
                r = T.floor(x[i, j] / scale[i] + 0.5)
                q[i, j] = T.cast(T.min(T.max(r, -qmax), qmax), T.int8)
            for i, j in T.Parallel(block_M, N):
                xhat[i, j] = q[i, j].astype(accum_dtype) * scale[i]
            T.copy(q, Q[bx * block_M, 0])
            T.copy(xhat, Xhat[bx * block_M, 0])

    return main


def ref_program(x):
    import torch

    xf = x.float()
    scale = xf.abs().amax(dim=1).clamp(min=1e-8) / 127
    q = torch.floor(xf / scale[:, None] + 0.5).clamp(-127, 127).to(torch.int8)
    return q, scale, (q.float() * scale[:, None]).to(x.dtype)


if __name__ == "__main__":
    import torch

    kernel = quant_int8(M=4096, N=4096)
    x = torch.randn(4096, 4096, device="cuda", dtype=torch.float16)
    for got, want in zip(kernel(x), ref_program(x)):
        torch.testing.assert_close(got.float(), want.float(), rtol=1e-2, atol=1.0 if got.dtype == torch.int8 else 1e-2)
    print("int8 quantisation: all checks pass")

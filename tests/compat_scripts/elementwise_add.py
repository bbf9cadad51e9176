# A TileLang-style script: an elementwise add built by a factory that takes the sizes.
import argparse

import numpy as np
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def elementwise_add(M, N, block_M=32, block_N=64, dtype="float32", threads=128):

    @T.prim_func
    def add_kernel(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            for i, j in T.Parallel(block_M, block_N):
                y = by * block_M + i
                x = bx * block_N + j
                C[y, x] = A[y, x] + B[y, x]

    return add_kernel


def main(m=300, n=200):
    a = np.random.randn(m, n).astype(np.float32)
    b = np.random.randn(m, n).astype(np.float32)
    kernel = elementwise_add(m, n)
    c = kernel(a, b)
    np.testing.assert_allclose(c, a + b, rtol=1e-6, atol=1e-6)
    again = elementwise_add(m, n)  # the same arguments: the same kernel
    assert again is kernel
    src = kernel.get_kernel_source()
    assert "add_kernel" in src, src[:200]
    print(f"elementwise_add {m}x{n}: ok")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--m", type=int, default=300)
    parser.add_argument("--n", type=int, default=200)
    args = parser.parse_args()
    main(args.m, args.n)

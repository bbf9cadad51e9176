"""2-D convolution as an implicit GEMM, NHWC activations and HWCF weights.

The GEMM view: rows are output pixels (N * OH * OW), columns are output channels F, and the
reduction runs over KH * KW * C. Each K step gathers an im2col tile of the input into shared
memory with a T.Parallel loop (zero for padding and for the ragged edges) and a matching tile of
the weights, then calls T.gemm. With the defaults, N * OH * OW = 392 is NOT a multiple of
block_M = 64 and KH * KW * C = 216 is NOT a multiple of block_K = 32.
"""
import argparse

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[2])
def convolution(N=2, C=24, H=14, W=14, F=64, K=3, S=1, D=1, P=1,
                block_M=64, block_N=64, block_K=32, num_stages=2, threads=128,
                dtype=T.float16, accum_dtype=T.float32):
    KH, KW = K, K
    OH = (H + 2 * P - D * (K - 1) - 1) // S + 1
    OW = (W + 2 * P - D * (K - 1) - 1) // S + 1
    GEMM_M = N * OH * OW
    GEMM_K = KH * KW * C

    @T.prim_func
    def main(
        data: T.Tensor((N, H, W, C), dtype),
        kernel: T.Tensor((KH, KW, C, F), dtype),
        out: T.Tensor((N, OH, OW, F), dtype),
    ):
        with T.Kernel(T.ceildiv(F, block_N), T.ceildiv(GEMM_M, block_M), threads=threads) as (bx, by):
            data_shared = T.alloc_shared((block_M, block_K), dtype)
            kernel_shared = T.alloc_shared((block_K, block_N), dtype)
            out_local = T.alloc_fragment((block_M, block_N), accum_dtype)

            T.clear(out_local)
            for k_iter in T.Pipelined(T.ceildiv(GEMM_K, block_K), num_stages=num_stages):
                # im2col gather: row m is output pixel (n, oh, ow), column k is tap (kh, kw, c).
                for i, j in T.Parallel(block_M, block_K):
                    m = by * block_M + i
                    k = k_iter * block_K + j
                    n = m // (OH * OW)
                    oh = m % (OH * OW) // OW
                    ow = m % OW
                    kh = k // (KW * C)
                    kw = k % (KW * C) // C
                    c = k % C
                    h = oh * S + kh * D - P
                    w = ow * S + kw * D - P
                    valid = (m < GEMM_M) and (k < GEMM_K) and (h >= 0) and (h < H) and (w >= 0) and (w < W)
                    data_shared[i, j] = T.if_then_else(valid, data[n, h, w, c], 0)
                for i, j in T.Parallel(block_K, block_N):
                    k = k_iter * block_K + i
                    f = bx * block_N + j
                    kh = k // (KW * C)
                    kw = k % (KW * C) // C
                    c = k % C
                    kernel_shared[i, j] = T.if_then_else((k < GEMM_K) and (f < F), kernel[kh, kw, c, f], 0)
                T.gemm(data_shared, kernel_shared, out_local)

            for i, j in T.Parallel(block_M, block_N):
                m = by * block_M + i
                f = bx * block_N + j
                if m < GEMM_M and f < F:
                    out[m // (OH * OW), m % (OH * OW) // OW, m % OW, f] = out_local[i, j]

    return main


def ref_program(stride, padding, dilation):
    import torch

    def run(A, B):
        out = torch.conv2d(A.permute(0, 3, 1, 2).float(), B.permute(3, 2, 0, 1).float(),
                           stride=stride, padding=padding, dilation=dilation)
        return out.permute(0, 2, 3, 1).to(A.dtype)

    return run


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=128)
    parser.add_argument("--c", type=int, default=128)
    parser.add_argument("--h", type=int, default=64)
    parser.add_argument("--w", type=int, default=64)
    parser.add_argument("--f", type=int, default=128)
    parser.add_argument("--k", type=int, default=3)
    parser.add_argument("--s", type=int, default=1)
    parser.add_argument("--d", type=int, default=1)
    parser.add_argument("--p", type=int, default=1)
    args = parser.parse_args(argv)

    import torch

    kernel = convolution(args.n, args.c, args.h, args.w, args.f, args.k, args.s, args.d, args.p)
    a = torch.randn(args.n, args.h, args.w, args.c, device="cuda", dtype=torch.float16)
    b = torch.randn(args.k, args.k, args.c, args.f, device="cuda", dtype=torch.float16)
    torch.testing.assert_close(kernel(a, b), ref_program(args.s, args.p, args.d)(a, b), rtol=1e-2, atol=1e-2)
    print("convolution: all checks pass")


if __name__ == "__main__":
    main()

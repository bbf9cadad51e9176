"""Tiled GEMM, C = A @ B, in TileLang's kernel-factory style.

float16 inputs, float32 accumulation, float16 output. The K loop is software-pipelined with
three stages and the block order is rasterized with T.use_swizzle.
"""
import argparse

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def matmul(
    M=256,
    N=256,
    K=256,
    block_M=128,
    block_N=128,
    block_K=32,
    num_stages=3,
    threads=128,
    dtype=T.float16,
    accum_dtype=T.float32,
    enable_rasterization=True,
):
    @T.prim_func
    def main(
        A: T.Tensor((M, K), dtype),
        B: T.Tensor((K, N), dtype),
        C: T.Tensor((M, N), dtype),
    ):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)

            # Group blocks in panels of 10 so neighbouring blocks reuse tiles of B in L2.
            T.use_swizzle(panel_size=10, enable=enable_rasterization)

            T.clear(C_local)
            for ko in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                T.copy(A[by * block_M, ko * block_K], A_shared)
                T.copy(B[ko * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)

            T.copy(C_local, C[by * block_M, bx * block_N])

    return main


def ref_program(A, B):
    return (A.float() @ B.float()).to(A.dtype)


def main():
    parser = argparse.ArgumentParser(description="TileLang tiled GEMM")
    parser.add_argument("--m", type=int, default=1024)
    parser.add_argument("--n", type=int, default=1024)
    parser.add_argument("--k", type=int, default=1024)
    args = parser.parse_args()

    import torch

    kernel = matmul(args.m, args.n, args.k)
    a = torch.randn(args.m, args.k, device="cuda", dtype=torch.float16)
    b = torch.randn(args.k, args.n, device="cuda", dtype=torch.float16)
    c = kernel(a, b)
    torch.testing.assert_close(c, ref_program(a, b), rtol=1e-2, atol=1e-2)
    latency = kernel.get_profiler().do_bench()
    print(f"latency: {latency:.3f} ms, {2 * args.m * args.n * args.k / latency * 1e-9:.1f} TFLOP/s")


if __name__ == "__main__":
    main()

"""fp8 GEMM, C = A @ B^T, with A (M, K) and B (N, K) in float8_e4m3fn, in TileLang's style.

B is stored (N, K), as a linear layer's weights are and as fp8 GEMMs take it everywhere: Hopper's
8-bit wgmma reads both operands K-major, so on sm_90a this gemm runs on wgmma m64nNk32 (QGMMA)
fed by TMA, with block_K = 128 (one 128-byte swizzle row of fp8). Accumulation is float32; C is
bfloat16. b_dtype=float8_e5m2 mixes the two fp8 formats. The default M = 200 is NOT a multiple
of block_M = 128: the last row of blocks reads zeros past the end of A and drops its stores.
"""
import argparse

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def matmul_fp8(
    M=200,
    N=256,
    K=512,
    block_M=128,
    block_N=128,
    block_K=128,
    num_stages=3,
    threads=128,
    a_dtype=T.float8_e4m3fn,
    b_dtype=T.float8_e4m3fn,
    out_dtype=T.bfloat16,
    accum_dtype=T.float32,
):
    @T.prim_func
    def main(
        A: T.Tensor((M, K), a_dtype),
        B: T.Tensor((N, K), b_dtype),
        C: T.Tensor((M, N), out_dtype),
    ):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), a_dtype)
            B_shared = T.alloc_shared((block_N, block_K), b_dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)

            T.use_swizzle(panel_size=10)

            T.clear(C_local)
            for ko in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                T.copy(A[by * block_M, ko * block_K], A_shared)
                T.copy(B[bx * block_N, ko * block_K], B_shared)
                T.gemm(A_shared, B_shared, C_local, transpose_B=True)

            T.copy(C_local, C[by * block_M, bx * block_N])

    return main


def ref_program(A, B):
    import torch

    return (A.float() @ B.float().T).to(torch.bfloat16)


def main():
    parser = argparse.ArgumentParser(description="TileLang fp8 GEMM (B transposed)")
    parser.add_argument("--m", type=int, default=4096)
    parser.add_argument("--n", type=int, default=4096)
    parser.add_argument("--k", type=int, default=4096)
    args = parser.parse_args()

    import torch

    kernel = matmul_fp8(args.m, args.n, args.k)
    a = (torch.randn(args.m, args.k, device="cuda") / 4).to(torch.float8_e4m3fn)
    b = (torch.randn(args.n, args.k, device="cuda") / 4).to(torch.float8_e4m3fn)
    c = kernel(a, b)
    torch.testing.assert_close(c.float(), ref_program(a, b).float(), rtol=2e-2, atol=2e-2)
    latency = kernel.get_profiler().do_bench()
    print(f"latency: {latency:.3f} ms, {2 * args.m * args.n * args.k / latency * 1e-9:.1f} TFLOP/s")


if __name__ == "__main__":
    main()

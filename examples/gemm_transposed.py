"""GEMM with B stored transposed: C = A @ B^T, with A (M, K) and B (N, K), in bfloat16.

This is the layout of a linear layer (weights stored as (out_features, in_features)). The default
M = 200 is NOT a multiple of block_M = 128: the last row of blocks reads zeros past the end of A
and its stores past the end of C are dropped.
"""
import argparse

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def matmul_nt(
    M=200,
    N=256,
    K=192,
    block_M=128,
    block_N=128,
    block_K=64,
    num_stages=2,
    threads=128,
    in_dtype=T.bfloat16,
    out_dtype=T.bfloat16,
    accum_dtype=T.float32,
):
    @T.prim_func
    def main(
        A: T.Tensor((M, K), in_dtype),
        B: T.Tensor((N, K), in_dtype),
        C: T.Tensor((M, N), out_dtype),
    ):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), in_dtype)
            B_shared = T.alloc_shared((block_N, block_K), in_dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            C_shared = T.alloc_shared((block_M, block_N), out_dtype)

            T.annotate_layout({
                A_shared: tilelang.layout.make_swizzled_layout(A_shared),
                B_shared: tilelang.layout.make_swizzled_layout(B_shared),
            })

            T.clear(C_local)
            for ko in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                # Slice form of T.copy: the source region is spelled out.
                T.copy(A[by * block_M:(by + 1) * block_M, ko * block_K:(ko + 1) * block_K], A_shared)
                T.copy(B[bx * block_N:(bx + 1) * block_N, ko * block_K:(ko + 1) * block_K], B_shared)
                T.gemm(A_shared, B_shared, C_local, transpose_B=True, policy=T.GemmWarpPolicy.Square)

            T.copy(C_local, C_shared)
            T.copy(C_shared, C[by * block_M, bx * block_N])

    return main


def ref_program(A, B):
    return (A.float() @ B.float().T).to(A.dtype)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--m", type=int, default=200)
    parser.add_argument("--n", type=int, default=256)
    parser.add_argument("--k", type=int, default=192)
    args = parser.parse_args()

    import torch

    kernel = matmul_nt(args.m, args.n, args.k)
    a = torch.randn(args.m, args.k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(args.n, args.k, device="cuda", dtype=torch.bfloat16)
    torch.testing.assert_close(kernel(a, b), ref_program(a, b), rtol=2e-2, atol=2e-2)
    print("matmul_nt: all checks pass")

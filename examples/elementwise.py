"""Fused elementwise chain D = act(A * B + C) on a 2-D tensor.

The activation is a compile-time string: "relu" (default), "silu" or "gelu_tanh"; the Python
if/elif inside the kernel keeps only the chosen formula. Math is done in float32 and rounded to
float16 on the store. The default M = 1000 is NOT a multiple of block_M = 64.
"""
import argparse

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def fused_mul_add_act(M=1000, N=256, block_M=64, block_N=64, threads=128, activation="relu", dtype=T.float16):
    accum_dtype = T.float32
    assert activation in ("relu", "silu", "gelu_tanh"), f"unknown activation {activation}"

    @T.prim_func
    def main(
        A: T.Tensor((M, N), dtype),
        B: T.Tensor((M, N), dtype),
        C: T.Tensor((M, N), dtype),
        D: T.Tensor((M, N), dtype),
    ):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_N), dtype)
            B_shared = T.alloc_shared((block_M, block_N), dtype)
            C_shared = T.alloc_shared((block_M, block_N), dtype)
            D_local = T.alloc_fragment((block_M, block_N), dtype)

            T.copy(A[by * block_M, bx * block_N], A_shared)
            T.copy(B[by * block_M, bx * block_N], B_shared)
            T.copy(C[by * block_M, bx * block_N], C_shared)
            for i, j in T.Parallel(block_M, block_N):
                v = T.cast(A_shared[i, j], accum_dtype) * T.cast(B_shared[i, j], accum_dtype) + T.cast(C_shared[i, j], accum_dtype)
                if activation == "relu":
                    D_local[i, j] = T.max(v, 0.0)
                elif activation == "silu":
                    D_local[i, j] = v * T.sigmoid(v)
                else:
                    D_local[i, j] = 0.5 * v * (1.0 + T.tanh(0.7978845608 * (v + 0.044715 * v * v * v)))
            T.copy(D_local, D[by * block_M, bx * block_N])

    return main


def ref_program(a, b, c, activation="relu"):
    import torch

    v = a.float() * b.float() + c.float()
    if activation == "relu":
        out = torch.relu(v)
    elif activation == "silu":
        out = torch.nn.functional.silu(v)
    else:
        out = torch.nn.functional.gelu(v, approximate="tanh")
    return out.to(a.dtype)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--m", type=int, default=4096)
    parser.add_argument("--n", type=int, default=4096)
    parser.add_argument("--activation", default="relu")
    args = parser.parse_args()

    import torch

    kernel = fused_mul_add_act(args.m, args.n, activation=args.activation)
    a, b, c = (torch.randn(args.m, args.n, device="cuda", dtype=torch.float16) for _ in range(3))
    torch.testing.assert_close(kernel(a, b, c), ref_program(a, b, c, args.activation), rtol=1e-2, atol=1e-2)
    print("elementwise: all checks pass")

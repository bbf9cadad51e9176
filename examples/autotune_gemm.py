"""A GEMM tuned the TileLang way: @autotune lists the block shapes and pipeline depths to try.

`tilec tune examples/autotune_gemm.py` compiles every configuration (on every core), times each
on the target and keeps the fastest for these options; `tilec run` then uses it. Until a
configuration has been chosen, `tilec run` takes the first one and says so. The tuned
parameters have no defaults: a configuration, or -D, gives them.
"""
import itertools

import tilelang
import tilelang.language as T
from tilelang.autotuner import autotune


def get_configs():
    space = dict(block_M=[64, 128], block_N=[64, 128], block_K=[32], num_stages=[2, 3], threads=[128])
    configs = [dict(zip(space, values)) for values in itertools.product(*space.values())]
    # Hopper's shape: two consumer warpgroups on a 128 x 256 tile, 64-deep K steps (TMA, warp
    # specialization; 0.99x cuBLAS at 4096^3 on an H200, docs/performance.md)
    configs += [dict(block_M=128, block_N=256, block_K=64, num_stages=s, threads=256) for s in (3, 4)]
    return configs


@autotune(configs=get_configs(), warmup=3, rep=20)
@tilelang.jit(out_idx=[-1])
def matmul(M=256, N=256, K=256, block_M=None, block_N=None, block_K=None, num_stages=None, threads=None,
           dtype=T.float16, accum_dtype=T.float32):
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
            T.clear(C_local)
            for ko in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                T.copy(A[by * block_M, ko * block_K], A_shared)
                T.copy(B[ko * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C[by * block_M, bx * block_N])

    return main


def main():
    import torch

    kernel = matmul(1024, 1024, 1024)
    a = torch.randn(1024, 1024, device="cuda", dtype=torch.float16)
    b = torch.randn(1024, 1024, device="cuda", dtype=torch.float16)
    torch.testing.assert_close(kernel(a, b), a @ b, rtol=1e-2, atol=1e-2)
    print("autotuned gemm: all checks pass")


if __name__ == "__main__":
    main()

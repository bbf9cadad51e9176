# Matrix multiplication with an autotuned tile configuration.
import argparse
import itertools

import torch
import tilelang
import tilelang.language as T
from tilelang.autotuner import autotune
from tilelang.carver.arch import driver


def ref_program(A, B):
    return A @ B.T


def get_configs(M, N, K, with_roller=False, topk=20):
    if with_roller:
        arch = driver.get_arch()  # noqa: F841
        raise NotImplementedError("roller is not wired up in this example")
    block_M = [64, 128, 256]
    block_N = [64, 128, 256]
    block_K = [32, 64]
    num_stages = [0, 1, 2, 3]
    thread_num = [128, 256]
    enable_rasterization = [True, False]
    _configs = list(
        itertools.product(
            block_M,
            block_N,
            block_K,
            num_stages,
            thread_num,
            enable_rasterization,
        ))
    configs = [
        {
            "block_M": c[0],
            "block_N": c[1],
            "block_K": c[2],
            "num_stages": c[3],
            "thread_num": c[4],
            "enable_rasteration": c[5],  # keep the upstream spelling
        } for c in _configs if c[0] * c[2] <= 128 * 64 or c[3] < 2
    ]
    return configs[:topk] if topk > 0 else configs


@autotune(configs=get_configs(1024, 1024, 1024), warmup=3, rep=20)
@tilelang.jit(out_idx=[-1], pass_configs={"tl.disable_tma_lower": True})
def matmul(M,
           N,
           K,
           block_M=128,
           block_N=128,
           block_K=32,
           num_stages=3,
           thread_num=128,
           enable_rasteration=False,
           dtype="float16",
           accum_dtype="float"):

    @T.prim_func
    def main(
            A: T.Tensor((M, K), dtype),
            B: T.Tensor((N, K), dtype),
            C: T.Tensor((M, N), dtype),
    ):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=thread_num) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_N, block_K), dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            C_shared = T.alloc_shared((block_M, block_N), dtype)
            T.use_swizzle(panel_size=10, enable=enable_rasteration)
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                T.copy(A[by * block_M, k * block_K], A_shared)
                T.copy(B[bx * block_N, k * block_K], B_shared)
                T.gemm(
                    A_shared,
                    B_shared,
                    C_local,
                    transpose_B=True,
                    policy=T.GemmWarpPolicy.FullRow,
                )
            T.copy(C_local, C_shared)
            T.copy(C_shared, C[by * block_M, bx * block_N])

    return main


def main(m=1024, n=1024, k=1024, use_autotune=False, with_roller=False):
    M, N, K = m, n, k
    total_flops = 2 * M * N * K
    if not use_autotune:
        kernel = matmul(M, N, K, 128, 128, 32, num_stages=3)
    else:
        kernel = matmul(M, N, K)
    profiler = kernel.get_profiler(tensor_supply_type=tilelang.TensorSupplyType.Auto)
    profiler.assert_allclose(ref_program, atol=1e-2, rtol=1e-2)
    latency = profiler.do_bench(warmup=500)
    print(f"Latency: {latency} ms")
    print(f"TFlops: {total_flops / latency * 1e-9:.3f} TFlops")
    ref_latency = profiler.do_bench(ref_program, warmup=500)
    print(f"Ref latency: {ref_latency:.4f} ms, speedup {ref_latency / latency:.2f}x")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Autotuned MatMul Benchmark")
    parser.add_argument("--m", type=int, default=1024, help="Matrix dimension M")
    parser.add_argument("--n", type=int, default=1024, help="Matrix dimension N")
    parser.add_argument("--k", type=int, default=1024, help="Matrix dimension K")
    parser.add_argument(
        "--use_autotune",
        action="store_true",
        default=False,
        help="Whether to use autotune for matmul configs")
    parser.add_argument("--with_roller", action="store_true", help="Whether to enable BitBLAS roller")
    args = parser.parse_args()
    main(args.m, args.n, args.k, args.use_autotune, args.with_roller)

# @autotune configurations with per-configuration pass_configs (gemm/example_gemm_autotune_pass_configs.py):
# compile options, not kernel parameters; tilec drops them. `tilec ir --list` evaluates no configuration.
import itertools

import tilelang
import tilelang.language as T
from tilelang.autotuner import autotune
from tilelang.transform import PassConfigKey


def get_configs():
    configs = []
    for bm, ws in itertools.product([16, 32], [True, False]):
        configs.append({"block_M": bm, "pass_configs": {PassConfigKey.TL_DISABLE_WARP_SPECIALIZED: ws}})
    return configs


@autotune(configs=get_configs(), warmup=3, rep=20)
@tilelang.jit(out_idx=[-1])
def double(M, N, block_M=64):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
            for i, j in T.Parallel(block_M, N):
                B[bx * block_M + i, j] = A[bx * block_M + i, j] * 2.0

    return main

# @autotune(configs=get_configs()) whose get_configs builds a helper class tilec does not run:
# the configurations only supply tuned parameters the command line leaves out, so the kernel
# still compiles (with a note) from its defaults and -D values.
import tilelang
import tilelang.language as T
from tilelang.autotuner import autotune


class TuneSpace:
    def __init__(self, blocks=(16, 32)):
        self.blocks = blocks


def get_configs():
    return [{"block_M": b} for b in TuneSpace().blocks]


@autotune(configs=get_configs(), warmup=1, rep=1)
@tilelang.jit(out_idx=[1])
def double(M, block_M=16):
    @T.prim_func
    def main(A: T.Tensor((M,), "float32"), B: T.Tensor((M,), "float32")):
        with T.Kernel(T.ceildiv(M, block_M), threads=32) as bx:
            for i in T.Parallel(block_M):
                B[bx * block_M + i] = A[bx * block_M + i] * 2

    return main

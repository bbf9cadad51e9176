# TileLang's autotuner over a @tilelang.jit factory: tuned when the call leaves the configuration's
# parameters out (a configuration tilec refuses is skipped), compiled directly when it names one.
import numpy as np
import tilelang
import tilelang.language as T
from tilelang.autotuner import *  # noqa: F401,F403 (autotune, set_autotune_inputs, as TileLang scripts write it)


def ref_program(x, y):
    return 3.0 * x + y


@autotune(configs=[{"block": 32}, {"block": 64}, {"block": 0}, {"block": 128}], warmup=1, rep=3, ref_prog=ref_program)
@tilelang.jit(out_idx=[-1])
def axpy(N, block=None, dtype="float32"):

    @T.prim_func
    def main(X: T.Tensor((N,), dtype), Y: T.Tensor((N,), dtype), Z: T.Tensor((N,), dtype)):
        with T.Kernel(T.ceildiv(N, block), threads=block) as bx:
            for i in T.Parallel(block):
                if bx * block + i < N:
                    Z[bx * block + i] = 3.0 * X[bx * block + i] + Y[bx * block + i]

    return main


x = np.random.randn(1000).astype(np.float32)
y = np.random.randn(1000).astype(np.float32)
tuned = axpy(1000)
assert np.allclose(tuned(x, y), ref_program(x, y), atol=1e-5)
assert axpy(1000) is tuned, "the tuning is kept for the same arguments"
direct = axpy(1000, block=64)
assert np.allclose(direct(x, y), ref_program(x, y), atol=1e-5)
with set_autotune_inputs(x[:999], y[:999]):
    again = axpy(999)
assert again(x[:999], y[:999]).shape == (999,)
print(f"autotune_axpy: ok (tuned: {tuned!r})")

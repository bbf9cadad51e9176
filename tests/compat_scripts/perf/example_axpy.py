# An example in the shape of TileLang's examples/*/example_*.py: a factory and its run_regression_perf.
import numpy as np
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def axpy(N, alpha, block=128, dtype="float32"):

    @T.prim_func
    def main(X: T.Tensor((N,), dtype), Y: T.Tensor((N,), dtype), Z: T.Tensor((N,), dtype)):
        with T.Kernel(T.ceildiv(N, block), threads=block) as bx:
            for i in T.Parallel(block):
                if bx * block + i < N:
                    Z[bx * block + i] = alpha * X[bx * block + i] + Y[bx * block + i]

    return main


def run_regression_perf(n=4096, block=128):
    kernel = axpy(n, 2.0, block)
    x = np.arange(n, dtype=np.float32)
    y = np.ones(n, dtype=np.float32)
    assert (kernel(x, y) == 2.0 * x + 1.0).all()
    from tilelang.profiler import do_bench

    return do_bench(lambda: kernel(x, y), warmup=2, rep=5)

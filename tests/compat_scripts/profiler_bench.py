# A TileLang-style check and timing: the kernel's profiler against a reference program,
# tilelang.profiler.do_bench on a call.
import numpy as np
import tilelang
import tilelang.language as T
from tilelang.profiler import do_bench


@tilelang.jit(out_idx=[-1], target="cuda", execution_backend="cython", pass_configs={
    tilelang.PassConfigKey.TL_DISABLE_TMA_LOWER: True})
def axpy(N, alpha, block=128, dtype="float32"):

    @T.prim_func
    def main(X: T.Tensor((N,), dtype), Y: T.Tensor((N,), dtype), Z: T.Tensor((N,), dtype)):
        with T.Kernel(T.ceildiv(N, block), threads=block) as bx:
            for i in T.Parallel(block):
                Z[bx * block + i] = alpha * X[bx * block + i] + Y[bx * block + i]

    return main


def ref_program(x, y):
    return 1.5 * x + y


kernel = axpy(1000, 1.5)
profiler = kernel.get_profiler(tensor_supply_type=tilelang.TensorSupplyType.Normal)
profiler.assert_allclose(ref_program, atol=1e-5, rtol=1e-5)
out = profiler.run_once()
assert out.shape == (1000,), out.shape
latency = profiler.do_bench(warmup=5, rep=20)
x = np.random.randn(1000).astype(np.float32)
y = np.random.randn(1000).astype(np.float32)
t = do_bench(lambda: kernel(x, y), warmup=5, rep=20)
ref_t = profiler.do_bench(ref_program, warmup=5, rep=20)
assert latency > 0 and t > 0 and ref_t > 0
try:
    profiler.assert_allclose(lambda x, y: 2.0 * x + y, atol=1e-5, rtol=1e-5)
except AssertionError as e:
    assert "mismatched" in str(e), e
else:
    raise SystemExit("a wrong reference passed assert_allclose")
print(f"profiler_bench: ok ({latency:.4f} ms profiler, {t:.4f} ms do_bench)")

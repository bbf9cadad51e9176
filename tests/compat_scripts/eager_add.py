# The eager @tilelang.jit style: sizes from the tensors (T.const), outputs from T.empty.
import numpy as np
import tilelang
import tilelang.language as T

BLOCK = 64


@tilelang.jit
def scale_add(A, B, alpha: float = 2.0, dtype=T.float32):
    M, N = T.const("M, N")
    A: T.Tensor((M, N), dtype)
    B: T.Tensor((M, N), dtype)
    C = T.empty((M, N), dtype)
    with T.Kernel(T.ceildiv(N, BLOCK), M, threads=128) as (bx, by):
        for j in T.Parallel(BLOCK):
            C[by, bx * BLOCK + j] = A[by, bx * BLOCK + j] * alpha + B[by, bx * BLOCK + j]
    return C


a = np.random.randn(5, 130).astype(np.float32)
b = np.random.randn(5, 130).astype(np.float32)
c = scale_add(a, b)
np.testing.assert_allclose(c, a * 2.0 + b, rtol=1e-6, atol=1e-6)
print("eager_add: ok")

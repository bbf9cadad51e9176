# A pytest file in the style of TileLang's example tests, run through tilec's layer:
#   python -m tilec.as_tilelang -m pytest tests/compat_scripts/test_compat_kernels.py
#   python -m tilec.as_tilelang tests/compat_scripts/test_compat_kernels.py   (tilelang.testing.main)
import numpy as np
import pytest
import tilelang
import tilelang.language as T
import tilelang.testing

import elementwise_add
import gemm_pipelined
from mylib import make_scaler


@tilelang.jit(out_idx=[-1])
def column_max(M, N, block_N=16, dtype="float32"):

    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), Out: T.Tensor((N,), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), threads=64) as bx:
            tile = T.alloc_fragment((M, block_N), dtype)
            best = T.alloc_fragment((block_N,), dtype)
            T.copy(A[0, bx * block_N], tile)
            T.reduce_max(tile, best, dim=0)
            T.copy(best, Out[bx * block_N])

    return main


@tilelang.testing.requires_cuda
def test_elementwise_add():
    elementwise_add.main(64, 96)


@tilelang.testing.requires_cuda_compute_version_ge(8, 0)
def test_gemm_pipelined():
    gemm_pipelined.main()


@pytest.mark.parametrize("m,n", [(16, 32), (40, 48)])
def test_column_max(m, n):
    tilelang.testing.set_random_seed(0)
    a = np.random.randn(m, n).astype(np.float32)
    out = column_max(m, n)(a)
    tilelang.testing.torch_assert_close(out, a.max(axis=0), rtol=1e-6, atol=1e-6)


def test_library_factory():
    k = make_scaler(64, factor=0.5)(rows=3)
    x = np.ones((3, 64), np.float32)
    np.testing.assert_allclose(k(x), np.full((3, 64), 1.0, np.float32))


def test_torch_assert_close_reports_mismatch():
    a = np.zeros(100, np.float32)
    b = a.copy()
    b[:5] = 1.0
    tilelang.testing.torch_assert_close(a, b, max_mismatched_ratio=0.05)
    with pytest.raises(AssertionError, match="mismatched"):
        tilelang.testing.torch_assert_close(a, b, max_mismatched_ratio=0.01)


def test_set_random_seed():
    tilelang.testing.set_random_seed(7)
    first = np.random.rand(4)
    tilelang.testing.set_random_seed(7)
    np.testing.assert_array_equal(first, np.random.rand(4))


def test_torch_tensors():
    torch = pytest.importorskip("torch", reason="torch is not installed")
    k = column_max(8, 16)
    if k.target != "cpu":
        pytest.skip(f"torch CPU tensors need the cpu target, the kernel is on {k.target}")
    a = torch.randn(8, 16)
    out = k(a)
    assert isinstance(out, torch.Tensor)
    torch.testing.assert_close(out, a.max(dim=0).values)


if __name__ == "__main__":
    tilelang.testing.main()

"""tilec.as_tilelang: what @T.prim_func captures, and the errors for what tilec cannot take.
(tests/e2e/as_tilelang.sh runs whole scripts through python -m tilec.as_tilelang.)"""
import enum
import math

import numpy as np
import pytest

import tilec.as_tilelang as compat
from tilec.as_tilelang import CompatError


@pytest.fixture(autouse=True)
def layer(monkeypatch):
    monkeypatch.setenv("TILEC_AS_TILELANG_TARGET", "cpu")
    compat.install()
    yield
    compat.uninstall()


def test_served_modules():
    import tilelang
    import tilelang.language as T
    from tilelang import language as T2
    from tilelang.profiler import do_bench  # noqa: F401

    assert T is T2 and T.float16 == "float16" and tilelang.PassConfigKey.TL_ENABLE_FAST_MATH == "tl.enable_fast_math"
    with pytest.raises(AttributeError, match="tilelang.no_such_api is not supported by tilec"):
        tilelang.no_such_api
    with pytest.raises(ImportError, match="tilelang.carver is not provided"):
        import tilelang.carver  # noqa: F401
    with pytest.raises(ImportError, match=r"test_as_tilelang.py:\d+: error: 'from tilelang import tvm': tilelang.tvm is not"):
        from tilelang import tvm  # noqa: F401
    with pytest.raises(ImportError, match="'from tilelang.profiler import nope': tilelang.profiler.nope is not"):
        from tilelang.profiler import nope  # noqa: F401
    assert getattr(tilelang, "nope", None) is None and hasattr(tilelang, "jit")


def test_values_captured():
    import tilelang
    import tilelang.language as T

    rows = T.symbolic("rows")
    policy = T.GemmWarpPolicy.FullRow
    big = math.inf
    scale = math.sqrt
    shape = (rows, 16)

    @tilelang.jit(out_idx=[-1])
    def k(dtype=T.float32):
        @T.prim_func
        def main(A: T.Tensor[shape, dtype], B: T.Tensor[(rows, 16), dtype]):
            with T.Kernel(T.ceildiv(rows, 4), threads=32) as bx:
                for i, j in T.Parallel(4, 16):
                    B[bx * 4 + i, j] = T.min(A[bx * 4 + i, j] * scale(4.0), big) + (policy == policy)

        return main

    kernel = k()
    a = np.random.randn(10, 16).astype(np.float32)
    np.testing.assert_allclose(kernel(a), a * 2.0 + 1.0, rtol=1e-6)


def test_symbolic_arithmetic_renders():
    import tilelang.language as T
    from tilec.as_tilelang._capture import Program

    m = T.symbolic("m")
    p = Program()
    assert p.expr((m * 2 + 1, T.ceildiv(m, 4), 7)) == \
        "(((_tlc_sym_m * 2) + 1), (((_tlc_sym_m + 4) - 1) // 4), 7)"


def test_two_values_of_one_name():
    import tilelang
    import tilelang.language as T

    def helper(x):
        return x * block  # this module's 'block'... which the kernel's closure also names

    block = 8

    def make(block):
        @T.prim_func
        def main(A: T.Tensor((16,), "float32")):
            with T.Kernel(1, threads=32) as bx:
                for i in T.Parallel(block):
                    A[i] = helper(A[i])

        return main

    with pytest.raises(CompatError, match="two different values named 'block'"):
        tilelang.compile(make(4))


def test_lambda_and_object_refused():
    import tilelang.language as T

    f = lambda x: x  # noqa: E731

    class Cfg:
        block = 4

        def tile(self):
            return 2

    cfg = Cfg()
    with pytest.raises(CompatError, match="reads 'f', a lambda"):
        @T.prim_func
        def main(A: T.Tensor((4,), "float32")):
            with T.Kernel(1) as bx:
                A[0] = f(A[0])
    with pytest.raises(CompatError, match=r"test_as_tilelang.py:\d+: error: the kernel reads 'cfg', a .*Cfg"):
        @T.prim_func
        def main2(A: T.Tensor((4,), "float32")):
            with T.Kernel(1) as bx:
                A[0] = len(cfg)
    with pytest.raises(CompatError, match=r"the kernel reads 'cfg.tile', a method"):
        @T.prim_func
        def main3(A: T.Tensor((4,), "float32")):
            with T.Kernel(1) as bx:
                A[0] = cfg.tile()


def test_object_attributes():
    import tilelang
    import tilelang.language as T

    class Cfg:
        def __init__(self):
            self.block, self.inner = 8, type("Inner", (), {"scale": 3.0})()

    class Mode(enum.Enum):
        PLAIN = 0
        SHIFTED = 1

    cfg = Cfg()
    mode = Mode.SHIFTED

    @T.prim_func
    def main(A: T.Tensor((8,), "float32"), B: T.Tensor((8,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            for i in T.Parallel(cfg.block):
                if mode == Mode.SHIFTED:
                    B[i] = A[i] * cfg.inner.scale + cfg.block
                else:
                    B[i] = A[i]

    a = np.arange(8, dtype=np.float32)
    np.testing.assert_allclose(tilelang.compile(main, out_idx=-1)(a), a * 3.0 + 8)


def test_python_side_kernel_call_refused():
    import tilelang.language as T

    with pytest.raises(CompatError, match="T.copy means something only inside a kernel"):
        T.copy(1, 2)


def test_targets_and_options(monkeypatch):
    import tilelang
    from tilec.as_tilelang._jit import _configs, resolve_target

    monkeypatch.delenv("TILEC_AS_TILELANG_TARGET")
    with pytest.raises(CompatError, match="target='hip' is not supported by tilec"):
        resolve_target("hip", "")
    assert resolve_target("c", "") == ("cpu", None)
    assert _configs({tilelang.PassConfigKey.TL_DISABLE_THREAD_STORAGE_SYNC: True}, ["-O3", "--use_fast_math"]) == \
        "{'tl.disable_thread_storage_sync': True, 'tl.enable_fast_math': True}"
    with pytest.raises(CompatError, match=r"tilelang.jit\(cache_input_tensors=...\) is not supported"):
        tilelang.jit(cache_input_tensors=True)


def test_kernel_api():
    import tilelang
    import tilelang.language as T

    @T.prim_func
    def main(A: T.Tensor((8,), "float32"), B: T.Tensor((8,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            for i in T.Parallel(8):
                B[i] = A[i] + 1.0

    k = tilelang.compile(main, out_idx=-1)
    assert "main" in k.get_kernel_source()
    assert k.out_idx == [1]
    np.testing.assert_array_equal(k.get_profiler(tilelang.TensorSupplyType.One).run_once(), np.full(8, 2.0))
    with pytest.raises(AttributeError, match="JITKernel.export_library is not supported by tilec"):
        k.export_library("x.so")

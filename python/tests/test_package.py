"""The tilec package on the cpu backend: compiling, calling on numpy, errors, verify, bench."""
import ctypes

import numpy as np
import pytest

import tilec
import tilec.language as T
from conftest import example

rng = np.random.default_rng(0)


@tilec.jit(out_idx=[-1])
def vadd(N=1024, block=256, dtype=T.float32):
    @T.prim_func
    def main(A: T.Tensor((N,), dtype), B: T.Tensor((N,), dtype), C: T.Tensor((N,), dtype)):
        with T.Kernel(T.ceildiv(N, block), threads=128) as bx:
            for i in T.Parallel(block):
                C[bx * block + i] = A[bx * block + i] + B[bx * block + i]

    return main


@tilec.jit
def twice(A, block=128):
    N = T.const("N")
    A: T.Tensor((N,), "float32")
    C = T.empty((N,), "float32")
    with T.Kernel(T.ceildiv(N, block), threads=128) as bx:
        for i in T.Parallel(block):
            if bx * block + i < N:
                C[bx * block + i] = A[bx * block + i] * 2.0
    return C


AXPY = """import tilelang.language as T
@T.prim_func
def axpy(A: T.Tensor((40,), 'float32'), B: T.Tensor((40,), 'float32'), alpha: T.float32, n: T.int32):
    with T.Kernel(2, threads=32) as bx:
        for i in T.Parallel(20):
            if bx * 20 + i < n:
                B[bx * 20 + i] = A[bx * 20 + i] * alpha + B[bx * 20 + i]
"""


def f32(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def test_version_and_backends():
    assert tilec.version() == tilec.__version__
    bs = tilec.backends()
    cpu = [b for b in bs if b["target"] == "cpu" and b["default"]]
    assert cpu and cpu[0]["available"] and cpu[0]["memory"] and cpu[0]["device_type"] == 1
    assert "cpu" in tilec.available_targets()
    for b in bs:
        assert b["available"] or b["reason"]


def test_jit_factory_out_idx():
    k = vadd(512)
    assert isinstance(k, tilec.Kernel) and k.target == "cpu" and k.out_idx == [2]
    assert [p.name for p in k.params] == ["A", "B", "C"] and k.params[2].is_output
    a, b = f32(512), f32(512)
    c = k(a, b)
    assert isinstance(c, np.ndarray) and c.shape == (512,) and c.dtype == np.float32
    np.testing.assert_array_equal(c, a + b)
    assert vadd(512) is k  # cached per binding
    assert vadd(N=256).params[0].shape == (256,)


def test_all_arguments_given_writes_in_place_without_copy():
    k = vadd(256)
    a, b = f32(256), f32(256)
    c = np.full(256, 7.0, dtype=np.float32)
    out = k(a, b, c)
    assert out is c  # the same array came back, written in place
    np.testing.assert_array_equal(c, a + b)


def test_eager_jit_shapes_from_tensors():
    a = f32(300)
    c = twice(a)
    np.testing.assert_allclose(c, 2 * a)
    assert twice(f32(64)).shape == (64,)


def test_nested_jit_reads_the_function_alone():
    block = 64

    @tilec.jit(out_idx=[-1])
    def neg(N=128):
        @T.prim_func
        def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
            with T.Kernel(T.ceildiv(N, block), threads=64) as bx:
                for i in T.Parallel(block):
                    B[bx * block + i] = -A[bx * block + i]

        return main

    a = f32(128)
    np.testing.assert_array_equal(neg()(a), -a)


def test_compile_path_with_consts_float16():
    k = tilec.compile(example("elementwise.py"), M=100, N=64, block_M=32, block_N=64, activation="silu")
    a, b, c = (rng.uniform(-1, 1, (100, 64)).astype(np.float16) for _ in range(3))
    d = k(a, b, c)
    v = a.astype(np.float32) * b.astype(np.float32) + c.astype(np.float32)
    np.testing.assert_allclose(d.astype(np.float32), v / (1 + np.exp(-v)), rtol=2e-3, atol=2e-3)


def test_compile_symbolic_dimension_output_allocation():
    k = tilec.compile(example("symbolic_dim.py"), N=64, K=32, block_N=64, block_K=32)
    assert k.params[0].dims[0] == "m" and k.params[0].shape[0] == -1
    x = rng.uniform(-1, 1, (70, 32)).astype(np.float16)
    w = rng.uniform(-1, 1, (32, 64)).astype(np.float16)
    bias = rng.uniform(-1, 1, (64,)).astype(np.float16)
    y = k(x, w, bias)
    assert y.shape == (70, 64)
    ref = x.astype(np.float32) @ w.astype(np.float32) + bias.astype(np.float32)
    np.testing.assert_allclose(y.astype(np.float32), ref, rtol=2e-2, atol=2e-2)


@tilec.jit(out_idx=[-1])
def flatten_rows(c=4):
    a, b = T.dynamic("a"), T.dynamic("b")

    @T.prim_func
    def main(S: T.Tensor((a, b, c), "float32"), Y: T.Tensor((a * b, c), "float32")):
        with T.Kernel(a, b, threads=32) as (bx, by):
            for k in T.Parallel(c):
                Y[bx * b + by, k] = S[bx, by, k] * 2.0

    return main


@tilec.jit(out_idx=[-1])
def widen(n=8):
    a, b = T.dynamic("a"), T.dynamic("b")

    @T.prim_func
    def main(A: T.Tensor((a,), "float32"), Y: T.Tensor((a * b,), "float32")):
        with T.Kernel(a, threads=32) as bx:
            Y[bx] = A[bx]

    return main


def test_output_dimension_computed_from_symbolic_sizes():
    # Y is [a * b, c]: the library's tilec_kernel_param_shape sizes it from the input's a and b
    k = flatten_rows()
    s = rng.uniform(-1, 1, (5, 3, 4)).astype(np.float32)
    y = k(s)
    assert y.shape == (15, 4)
    np.testing.assert_array_equal(y, s.reshape(15, 4) * 2)
    with pytest.raises(tilec.UsageError, match="needs the size 'b' that no input tensor gives"):
        widen()(np.ones(4, np.float32))


def test_eager_file_kernel_returns_tempty():
    k = tilec.compile(example("eager_gemm.py"), M=64, N=64, K=32, block_M=64, block_N=64)
    assert k.out_idx == [2]
    a = rng.uniform(-1, 1, (64, 32)).astype(np.float16)
    b = rng.uniform(-1, 1, (32, 64)).astype(np.float16)
    c = k(a, b)
    np.testing.assert_allclose(c.astype(np.float32), a.astype(np.float32) @ b.astype(np.float32), rtol=2e-2,
                               atol=2e-2)


def test_scalars_from_python_numbers():
    k = tilec.compile(AXPY)
    a = np.arange(40, dtype=np.float32)
    b = np.ones(40, dtype=np.float32)
    assert k(a, b, 0.5, 33) is None  # no out_idx: nothing returned
    np.testing.assert_array_equal(b, np.where(np.arange(40) < 33, a * 0.5 + 1, 1))


def test_wrong_shape_raises_c_api_text_and_writes_nothing():
    k = vadd(256)
    a, b = f32(256), f32(100)
    c = np.full(256, 7.0, dtype=np.float32)
    with pytest.raises(tilec.UsageError) as e:
        k(a, b, c)
    assert str(e.value) == "error: argument 'B' has size 100 in dimension 0, expected 256"
    assert e.value.status == 2 and isinstance(e.value, ValueError)
    assert (c == 7.0).all()


def test_wrong_dtype_and_count():
    k = vadd(256)
    with pytest.raises(tilec.UsageError, match=r"argument 'A' has dtype float64, expected float32"):
        k(np.zeros(256), f32(256))
    with pytest.raises(tilec.UsageError, match=r"kernel 'vadd' takes 2 arguments \(3 with its outputs\), 1 given"):
        k(f32(256))
    with pytest.raises(tilec.UsageError, match="not contiguous"):
        k(f32(512)[::2], f32(256))
    with pytest.raises(tilec.UsageError, match="scalar of dtype float32"):
        tilec.compile(AXPY)(f32(40), f32(40), "x", 3)


class FakeCudaArray:
    """A producer whose DLPack tensor says it lives on a CUDA device."""

    def __init__(self, a):
        self.a = a
        self.shape = a.shape

    def __dlpack_device__(self):
        return (1, 0)  # answer cpu so the consumer asks without a stream

    def __dlpack__(self, stream=None):
        cap = self.a.__dlpack__()
        get = ctypes.pythonapi.PyCapsule_GetPointer
        get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
        t = ctypes.cast(get(cap, b"dltensor"), ctypes.POINTER(tilec._lib.DLTensor)).contents
        t.device.device_type = 2
        return cap


def test_wrong_device_raises_c_api_text():
    k = vadd(256)
    with pytest.raises(tilec.UsageError) as e:
        k(FakeCudaArray(f32(256)), f32(256))
    assert str(e.value) == ("error: argument 'A' is a tensor on device 'cuda', but kernel 'vadd' runs on 'cpu' "
                            "(tilec copies nothing: pass host memory)")


def test_read_only_and_bool_inputs():
    a, b = f32(256), f32(256)
    a.flags.writeable = False
    np.testing.assert_array_equal(vadd(256)(a, b), a + b)


def test_program_error_has_location_and_nothing_compiled():
    src = "import tilelang.language as T\n@T.prim_func\ndef f(A: T.Tensor((4,), 'float32')):\n    with T.Kernel(1) as bx:\n        A[0] = undefined_name\n"
    with pytest.raises(tilec.ProgramError) as e:
        tilec.compile(src)
    assert e.value.file == "<string>" and e.value.line == 5 and e.value.col > 0
    assert str(e.value).startswith("<string>:5:")
    assert "undefined_name" in str(e.value)


def test_uncleared_accumulator_warns_with_its_place():
    src = ("import tilelang.language as T\n@T.prim_func\n"
           "def f(A: T.Tensor((16, 16), 'float16'), C: T.Tensor((16, 16), 'float32')):\n"
           "    with T.Kernel(1, threads=32) as bx:\n"
           "        A_s = T.alloc_shared((16, 16), 'float16')\n"
           "        acc = T.alloc_fragment((16, 16), 'float32')\n"
           "        T.copy(A, A_s)\n"
           "        T.gemm(A_s, A_s, acc)\n"
           "        T.copy(acc, C)\n")
    with pytest.warns(tilec.TilecWarning) as w:
        tilec.compile(src)
    text = str(w[0].message)
    assert text.startswith("<string>:8:9: warning: T.gemm adds its product to 'acc', which nothing has written yet")
    assert "T.gemm(A_s, A_s, acc)" in text and "clear_accum=True" in text


def test_jit_program_error_points_into_this_file(tmp_path):
    p = tmp_path / "bad_kernel.py"
    p.write_text("import tilec\nimport tilec.language as T\n\n@tilec.jit(out_idx=[-1])\ndef bad(N=8):\n"
                 "    @T.prim_func\n    def main(A: T.Tensor((N,), 'float32'), B: T.Tensor((N,), 'float32')):\n"
                 "        with T.Kernel(1, threads=32) as bx:\n            T.copy(A, B, bogus=1)\n    return main\n")
    ns = {}
    exec(compile(p.read_text(), str(p), "exec"), ns)
    with pytest.raises(tilec.ProgramError) as e:
        ns["bad"]()
    assert e.value.file == str(p) and e.value.line == 9
    assert str(e.value).startswith(f"{p}:9:")


def test_unknown_binding_and_kernel():
    with pytest.raises(tilec.UsageError, match="no kernel named 'nope'"):
        tilec.compile(example("gemm.py"), kernel="nope")
    with pytest.raises(tilec.UsageError):
        tilec.compile(example("gemm.py"), not_a_param=3)
    # a backend that cannot run here: the offline Metal compiler exists only on macOS
    metallib = [b for b in tilec.backends() if b["target"] == "metal" and b["name"] == "metallib"]
    if metallib and not metallib[0]["available"]:
        with pytest.raises(tilec.TargetError):
            tilec.compile(example("gemm.py"), target="metal", backend="metallib", M=64, N=64, K=64)


def test_source():
    k = vadd(256)
    src = k.get_kernel_source()
    assert "vadd" in src and src == k.source(kernel_only=True)
    assert len(k.source(kernel_only=False)) > len(src)
    cuda = vadd.program().source("vadd", (("N", "256"),), target="cuda,arch=sm_90a")
    assert "__global__" in cuda


def test_verify_and_bench():
    k = vadd(256)
    a, b = f32(256), f32(256)
    rep = k.verify(a, b)
    assert rep.ok and rep[0]["name"] == "C" and rep[0]["cosine"] > 0.999999 and rep[0]["argmax_match"]
    assert rep.against == "reference interpreter"
    np.testing.assert_array_equal(rep.outputs, a + b)
    r = k.bench(a, b, min_seconds=0.01)
    assert r["runs"] >= 5 and 0 < r["min_ms"] <= r["median_ms"] <= r["max_ms"]


def test_verify_detects_a_wrong_reference_input():
    # The kernel accumulates into B (B += A * alpha): verify must compare against a reference run
    # from the same initial B, so an in-place kernel verifies too.
    k = tilec.compile(AXPY)
    a, b = np.arange(40, dtype=np.float32), np.ones(40, dtype=np.float32)
    rep = k.verify(a, b, 0.5, 40)
    assert rep.ok and rep[0]["max_abs_err"] == 0
    np.testing.assert_array_equal(b, a * 0.5 + 1)


ROUNDED = """
import tilelang.language as T
@T.prim_func
def through(A: T.Tensor((64,), "float32"), B: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=64) as bx:
        s = T.alloc_shared((64,), "bfloat16")
        for i in T.Parallel(64):
            s[i] = A[i] * 3.0
        for i in T.Parallel(64):
            B[i] = s[i] * 0.5
"""


def test_verify_uses_the_dtype_an_output_is_rounded_through():
    # B is float32 but computed from a bfloat16 tile: the parameter says so, and verify applies
    # bfloat16's tolerance (docs/verify.md)
    k = tilec.compile(ROUNDED)
    assert [p.rounds_through for p in k.params] == [None, "bfloat16"]
    rep = k.verify(f32(64), f32(64))
    assert rep.ok and rep[0]["rounds_through"] == "bfloat16" and rep[0]["rtol"] == 5e-2


SLOTS = """
import tilelang.language as T
@T.prim_func
def slots(A: T.Tensor((2, 64), "float32"), Idx: T.Tensor((2, 64), "int32")):
    with T.Kernel(2, threads=64) as bx:
        count = T.alloc_shared((1,), "int32")
        slot = T.alloc_var("int32")
        tx = T.get_thread_binding()
        if tx == 0:
            count[0] = 0
        T.sync_threads()
        for j in T.serial(2):
            if A[bx, j * 32 + tx // 2] > 0:
                slot = T.atomic_add(count[0], 1, return_prev=True)
                Idx[bx, slot] = j * 64 + tx
"""


def test_verify_compares_slots_from_atomics_as_multisets():
    # Idx's second dimension is filled in the order threads take slots, which the reference and
    # the cpu target order differently: the parameter says so, and verify sorts each row first
    k = tilec.compile(SLOTS)
    assert [p.unordered_dims for p in k.params] == [(), (1,)]
    a = np.where(np.arange(128).reshape(2, 64) % 3 == 0, 1.0, -1.0).astype(np.float32)
    rep = k.verify(a, np.full((2, 64), -1, dtype=np.int32))
    assert rep.ok and rep[0]["unordered_dims"] == [1]


def test_tilec_tensor_on_cpu():
    a = tilec.tensor(f32(256))
    b = tilec.tensor(f32(256))
    assert a.__dlpack_device__() == (1, 0) and a.shape == (256,) and a.dtype == "float32"
    c = vadd(256)(a, b)
    assert isinstance(c, tilec.Tensor)
    np.testing.assert_array_equal(c.numpy(), a.numpy() + b.numpy())
    z = tilec.zeros((3, 4), "float16")
    assert (z.numpy() == 0).all() and z.numpy().dtype == np.float16
    with pytest.raises(tilec.UsageError):
        a.copy_from(np.zeros(3, dtype=np.float32))


def test_device_memory_unavailable_target_raises():
    # a target whose default backend cannot hold tensors here (cuda without a GPU, metal without
    # the emulator's compiler); where every target can, there is nothing to refuse
    without = [t for t in ("cuda", "metal") if t not in tilec.available_targets()]
    if not without:
        pytest.skip("every target holds tensors here")
    for t in without:
        with pytest.raises(tilec.TargetError):
            tilec.empty((4,), "float32", target=t)


def test_tensor_reshape_is_a_view():
    t = tilec.tensor(np.arange(12, dtype=np.float32))
    v = t.reshape(3, 4)
    assert v.shape == (3, 4) and v.ptr == t.ptr
    np.testing.assert_array_equal(v.numpy(), np.arange(12).reshape(3, 4))
    del t  # the view keeps the memory
    np.testing.assert_array_equal(v.reshape((12,)).numpy(), np.arange(12))
    with pytest.raises(tilec.UsageError):
        v.reshape(5, 5)


def test_prepared_launch_and_stream_rules():
    k = vadd(256)
    a, b = f32(256), f32(256)
    run = k.prepare(a, b)
    c = run()
    np.testing.assert_array_equal(c, a + b)
    a += 1  # the prepared launch reads the same memory: no copy was taken
    assert run() is c
    np.testing.assert_array_equal(c, a + b)
    with pytest.raises(tilec.UsageError, match="stream"):
        run.enqueue(0x1234)
    with pytest.raises(tilec.UsageError, match="stream"):
        k(a, b, stream=0x1234)


def test_autotune_configurations_and_the_first_as_default():
    prog = tilec.context().program(example("autotune_gemm.py"), open(example("autotune_gemm.py")).read())
    cfgs = prog.autotune_configs("matmul")
    assert len(cfgs) == 10 and cfgs[0] == [("block_M", "64"), ("block_N", "64"), ("block_K", "32"),
                                          ("num_stages", "2"), ("threads", "128")]
    a = rng.standard_normal((64, 64)).astype(np.float16)
    b = rng.standard_normal((64, 64)).astype(np.float16)
    k = tilec.compile(example("autotune_gemm.py"), M=64, N=64, K=64)  # tuned names unbound: the first configuration
    want = a.astype(np.float32) @ b.astype(np.float32)
    assert np.allclose(k(a, b).astype(np.float32), want, atol=0.05, rtol=0.01)
    k2 = tilec.compile(example("autotune_gemm.py"), M=64, N=64, K=64, block_M=64, block_N=64, block_K=32,
                       num_stages=3, threads=128)  # bound: no configuration added
    assert np.allclose(k2(a, b).astype(np.float32), want, atol=0.05, rtol=0.01)
    assert prog.autotune_configs(None) == cfgs  # the only kernel


def test_cuda_emulator_from_python():
    """backend="emu" runs the CUDA C++ on the CPU emulator with numpy arrays (host tensors): the
    sm_90a path (wgmma, TMA, a warp-specialized pipeline) where no GPU is at hand."""
    emu = [b for b in tilec.backends() if b["target"] == "cuda" and b["name"] == "emu"]
    if not emu or not emu[0]["available"]:
        pytest.skip("no C++ compiler for the emulator")
    k = tilec.compile(example("gemm.py"), target="cuda,arch=sm_90a", backend="emu", M=200, N=320, K=192, block_M=128,
                      block_N=256, block_K=64, threads=256, num_stages=3)
    assert k.target == "cuda" and k.backend == "emu"
    a = rng.uniform(-1, 1, (200, 192)).astype(np.float16)
    b = rng.uniform(-1, 1, (192, 320)).astype(np.float16)
    c = k(a, b)
    np.testing.assert_allclose(c.astype(np.float32), a.astype(np.float32) @ b.astype(np.float32), rtol=2e-2, atol=2e-2)
    assert k.verify(a, b).ok


def test_grid_past_cuda_limits_refused_before_outputs_exist():
    """A grid no CUDA launch can hold (2^31 - 1 blocks at most, even folded into x) is an error
    before tilec allocates the outputs: here 40000 x 70000 blocks writing 1 MiB each, which numpy
    could not allocate either. 70000 blocks along y alone launch folded into x."""
    emu = [b for b in tilec.backends() if b["target"] == "cuda" and b["name"] == "emu"]
    if not emu or not emu[0]["available"]:
        pytest.skip("no C++ compiler for the emulator")
    src = """
import tilelang.language as T
M = T.dynamic("M")
N = T.dynamic("N")
@T.prim_func
def rows(A: T.Tensor((N,), "float32"), S: T.Tensor((M,), "float32"), B: T.Tensor((N, M, 262144), "float32")):
    with T.Kernel(M, N, threads=32) as (bx, by):
        for i in T.Parallel(32):
            B[by, bx, i] = A[by] + S[bx] + i
"""
    k = tilec.compile(src, target="cuda", backend="emu", out_idx=[2])
    assert k(np.ones(3, np.float32), np.zeros(2, np.float32))[:, :, :32].sum() == 6 * (32 + 31 * 32 // 2)
    with pytest.raises(tilec.UsageError, match=r"launch grid \(40000, 70000, 1\) has more than 2\^31 - 1 blocks"):
        k(np.ones(70000, np.float32), np.ones(40000, np.float32))


# ---- the call plan (issue 37: a call costs a few microseconds beyond the launch) -------------------
SOFTMAX = example("softmax.py")


def softmax_ref(x):
    v = x.astype(np.float32)
    mx = v.max(axis=1, keepdims=True)
    e = np.exp(v - mx)
    s = e.sum(axis=1, keepdims=True)
    return (e / s), (mx + np.log(s))[:, 0]


def test_call_allocates_outputs_with_their_shape_and_dtype():
    k = tilec.compile(SOFTMAX, target="cpu")
    assert k.out_idx == [1, 2] and k.params[0].dims[0] == "m"
    for rows in (16, 33, 16, 1):  # the plan's sizes cache is keyed by m
        x = rng.uniform(-2, 2, (rows, 1000)).astype(np.float16)
        y, lse = k(x)
        assert isinstance(y, np.ndarray) and y.shape == (rows, 1000) and y.dtype == np.float16
        assert isinstance(lse, np.ndarray) and lse.shape == (rows,) and lse.dtype == np.float32
        want_y, want_lse = softmax_ref(x)
        np.testing.assert_allclose(y.astype(np.float32), want_y, rtol=1e-2, atol=1e-3)
        np.testing.assert_allclose(lse, want_lse, rtol=1e-3, atol=1e-3)


def test_second_call_with_other_sizes_and_outputs_given():
    k = tilec.compile(example("symbolic_dim.py"), N=64, K=32, block_N=64, block_K=32)
    w = rng.uniform(-1, 1, (32, 64)).astype(np.float16)
    bias = rng.uniform(-1, 1, (64,)).astype(np.float16)
    for m in (70, 5, 70, 128):
        x = rng.uniform(-1, 1, (m, 32)).astype(np.float16)
        y = k(x, w, bias)
        assert y.shape == (m, 64)
        ref = x.astype(np.float32) @ w.astype(np.float32) + bias.astype(np.float32)
        np.testing.assert_allclose(y.astype(np.float32), ref, rtol=2e-2, atol=2e-2)
        out = np.full((m, 64), 9, np.float16)  # every argument given: written in place, returned
        assert k(x, w, bias, out) is out
        np.testing.assert_array_equal(out, y)


def test_errors_after_the_plan_is_made_keep_the_c_api_text():
    k = vadd(256)
    a, b = f32(256), f32(256)
    np.testing.assert_array_equal(k(a, b), a + b)  # plan made, slots filled for float32[256]
    with pytest.raises(tilec.UsageError) as e:
        k(np.zeros(256), b)
    assert str(e.value) == "error: argument 'A' has dtype float64, expected float32"
    # a second, different error: its own text, not the first one's (the error struct is reused)
    with pytest.raises(tilec.UsageError) as e:
        k(a, f32(100))
    assert str(e.value) == "error: argument 'B' has size 100 in dimension 0, expected 256"
    with pytest.raises(tilec.UsageError) as e:
        k(a, f32(256, 1))
    assert str(e.value) == "error: argument 'B' has 2 dimensions, expected 1"
    with pytest.raises(tilec.UsageError) as e:
        k(FakeCudaArray(f32(256)), b)
    assert str(e.value) == ("error: argument 'A' is a tensor on device 'cuda', but kernel 'vadd' runs on 'cpu' "
                            "(tilec copies nothing: pass host memory)")
    with pytest.raises(tilec.UsageError, match=r"kernel 'vadd' takes 2 arguments \(3 with its outputs\), 4 given"):
        k(a, b, a, b)
    with pytest.raises(tilec.UsageError, match="expected a tensor"):
        k(a, [1.0] * 256)
    np.testing.assert_array_equal(k(a, b), a + b)  # and the plan still works


def test_plan_is_not_fooled_by_strides():
    k = vadd(256)
    big = f32(512)
    a, b = np.ascontiguousarray(big[::2]), f32(256)
    np.testing.assert_array_equal(k(a, b), a + b)
    # same shape and dtype as the last call, other strides: refused, not read as contiguous
    with pytest.raises(tilec.UsageError, match="argument 'A' is not contiguous"):
        k(big[::2], b)
    k2 = tilec.compile(example("elementwise.py"), M=64, N=64, block_M=64, block_N=64)
    x, y, z = (rng.uniform(-1, 1, (64, 64)).astype(np.float16) for _ in range(3))
    d = k2(x, y, z)
    with pytest.raises(tilec.UsageError, match="argument 'A' is not contiguous"):
        k2(x.T, y, z)  # (64, 64) like x, strides swapped
    np.testing.assert_array_equal(k2(x, y, z), d)
    c = np.zeros(256, np.float32)
    with pytest.raises(tilec.UsageError, match="argument 'C' is not contiguous"):
        k(a, b, np.zeros(512, np.float32)[::2])
    assert k(a, b, c) is c
    np.testing.assert_array_equal(c, a + b)


class CountingLib:
    """A libtilec stand-in that counts the calls a kernel makes through its _lib."""

    def __init__(self, real):
        self.real, self.calls = real, {}

    def __getattr__(self, name):
        f = getattr(self.real, name)
        if not name.startswith("tilec_"):
            return f

        def counted(*args):
            self.calls[name] = self.calls.get(name, 0) + 1
            return f(*args)

        return counted


def test_symbolic_size_functions_run_once_per_size_tuple():
    # a binding no other test uses, so the kernel (and its sizes cache) is new
    k = tilec.compile(SOFTMAX, target="cpu", block_N=64)
    counting = CountingLib(k._lib)
    k._lib = counting
    try:
        for rows in (16, 16, 33, 16, 33, 33, 1, 16):
            y, lse = k(rng.uniform(-1, 1, (rows, 1000)).astype(np.float16))
            assert y.shape == (rows, 1000) and lse.shape == (rows,)
    finally:
        k._lib = counting.real
    c = counting.calls
    # three distinct m: the grid check once each, each of the two outputs' shapes once each
    assert c.get("tilec_kernel_check_sizes") == 3, c
    assert c.get("tilec_kernel_param_shape") == 6, c
    assert c.get("tilec_kernel_sym_name", 0) <= 1 and c.get("tilec_kernel_num_syms", 0) <= 1, c


def test_scalars_each_call_and_their_conversion():
    k = tilec.compile(AXPY)
    a = np.arange(40, dtype=np.float32)
    for alpha, n in ((0.5, 33), (2, 40), (True, 1)):
        b = np.ones(40, dtype=np.float32)
        assert k(a, b, alpha, n) is None
        np.testing.assert_array_equal(b, np.where(np.arange(40) < n, a * float(alpha) + 1, 1))
    b = np.ones(40, dtype=np.float32)
    k(a, b, np.float32(0.25), np.int32(40))  # numpy scalars: through DLPack, as before
    np.testing.assert_array_equal(b, a * 0.25 + 1)
    with pytest.raises(OverflowError):
        k(a, b, 0.5, 1 << 40)  # as np.array(1 << 40, dtype=int32)
    with pytest.raises(tilec.UsageError, match="scalar of dtype int32, got str"):
        k(a, b, 0.5, "3")


HIST = """
import tilelang.language as T
@T.prim_func
def hist(X: T.Tensor((1000,), "int32"), H: T.Tensor((8,), "int32"), Y: T.Tensor((1000,), "int32")):
    with T.Kernel(4, threads=256) as bx:
        tx = T.get_thread_binding(0)
        if bx * 256 + tx < 1000:
            T.atomic_add(H[X[bx * 256 + tx] % 8], 1)
            Y[bx * 256 + tx] = X[bx * 256 + tx] * 2
"""


def test_outputs_a_kernel_reads_are_zero_filled():
    k = tilec.compile(HIST, out_idx=[1, 2])
    from tilec import _core

    assert _core._outputs_read(k) == [True, False]  # H accumulates (atomic_add); Y is only stored
    x = rng.integers(0, 100, 1000).astype(np.int32)
    want = np.bincount(x % 8, minlength=8)
    for _ in range(3):  # tilec.Tensor outputs: H from tilec.zeros, Y from tilec.empty
        h, y = k(tilec.tensor(x))
        np.testing.assert_array_equal(h.numpy(), want)
        np.testing.assert_array_equal(y.numpy(), x * 2)
    h, y = k(x)  # numpy outputs are zero-filled
    np.testing.assert_array_equal(h, want)
    k.zero_outputs = True  # every output zero-filled, tilec.Tensor's Y too
    h, y = k(tilec.tensor(x))
    np.testing.assert_array_equal(h.numpy(), want)
    assert _core._outputs_read(vadd(256)) == [False]
    assert _core._outputs_read(tilec.compile(example("splitk_gemm.py"), out_idx=[-1])) == [True]
    kv = tilec.compile(example("elementwise.py"), M=64, N=64, block_M=32, block_N=64)
    kv.zero_outputs = False  # np.empty: the kernel writes all of D
    a, b, c = (rng.uniform(-1, 1, (64, 64)).astype(np.float16) for _ in range(3))
    want_d = np.maximum(a.astype(np.float32) * b.astype(np.float32) + c.astype(np.float32), 0)
    for _ in range(3):
        np.testing.assert_allclose(kv(a, b, c).astype(np.float32), want_d, rtol=2e-3, atol=2e-3)


def test_reading_the_ir_for_outputs_leaves_no_warning_behind():
    src = ("import tilelang.language as T\n@T.prim_func\n"
           "def g(A: T.Tensor((16, 16), 'float16'), C: T.Tensor((16, 16), 'float32')):\n"
           "    with T.Kernel(1, threads=32) as bx:\n"
           "        A_s = T.alloc_shared((16, 16), 'float16')\n"
           "        acc = T.alloc_fragment((16, 16), 'float32')\n"
           "        T.copy(A, A_s)\n"
           "        T.gemm(A_s, A_s, acc)\n"
           "        T.copy(acc, C)\n")
    with pytest.warns(tilec.TilecWarning):
        k = tilec.compile(src, out_idx=[-1])
    from tilec import _core

    assert _core._outputs_read(k) == [False]
    assert not tilec._lib.lib().tilec_context_take_warning(tilec.context().handle)


def test_calls_from_threads_share_a_kernel():
    import threading

    k = vadd(1024)
    errors = []

    def work(seed):
        r = np.random.default_rng(seed)
        try:
            for _ in range(200):
                a, b = r.standard_normal(1024).astype(np.float32), r.standard_normal(1024).astype(np.float32)
                np.testing.assert_array_equal(k(a, b), a + b)
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=work, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]

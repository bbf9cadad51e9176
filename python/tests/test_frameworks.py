"""torch and CuPy tensors through __dlpack__: skipped where the framework is missing."""
import numpy as np
import pytest

import tilec
from test_package import vadd

torch = pytest.importorskip("torch")


def test_torch_cpu_no_copy():
    k = vadd(256)
    a, b = torch.randn(256), torch.randn(256)
    c = k(a, b)
    assert isinstance(c, torch.Tensor) and c.device.type == "cpu"
    torch.testing.assert_close(c, a + b)
    out = torch.zeros(256)
    assert k(a, b, out) is out
    torch.testing.assert_close(out, a + b)


def test_torch_errors_match_c_api():
    k = vadd(256)
    with pytest.raises(tilec.UsageError, match="argument 'A' has dtype float16, expected float32"):
        k(torch.randn(256, dtype=torch.float16), torch.randn(256))


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
def test_torch_cuda():
    k = vadd.compile(target="cuda", N=1 << 20)
    a, b = torch.randn(1 << 20, device="cuda"), torch.randn(1 << 20, device="cuda")
    c = k(a, b)
    assert c.device.type == "cuda"
    torch.testing.assert_close(c, a + b)
    assert k.verify(a, b).ok
    with pytest.raises(tilec.UsageError, match="is a tensor on device 'cpu', but kernel 'vadd' runs on 'cuda'"):
        k(a.cpu(), b.cpu())
    t = tilec.tensor(np.ones(1 << 20, dtype=np.float32), target="cuda")
    np.testing.assert_array_equal(k(t, t).numpy(), 2)


def test_torch_outputs_from_torch_empty(monkeypatch):
    # vadd only stores C: its output comes from torch.empty (the caching allocator; no fill)
    k = vadd(256)
    a, b = torch.randn(256), torch.randn(256)

    def no_zeros(*args, **kwargs):
        raise AssertionError("torch.zeros called for an output the kernel only writes")

    monkeypatch.setattr(torch, "zeros", no_zeros)
    for _ in range(2):
        c = k(a, b)
        assert c.dtype == torch.float32 and c.shape == (256,) and c.device.type == "cpu"
        torch.testing.assert_close(c, a + b)


def test_torch_plan_checks_strides_dtype_and_grad():
    from conftest import example

    k = tilec.compile(example("elementwise.py"), M=64, N=64, block_M=64, block_N=64)
    x, y, z = (torch.rand(64, 64, dtype=torch.float16) for _ in range(3))
    d = k(x, y, z)
    with pytest.raises(tilec.UsageError, match="argument 'A' is not contiguous"):
        k(x.t(), y, z)
    with pytest.raises(tilec.UsageError, match="argument 'B' has dtype float32, expected float16"):
        k(x, y.float(), z)
    torch.testing.assert_close(k(x, y, z), d)
    # a tensor that requires grad is read as it is (as TileLang does; DLPack export refuses it)
    torch.testing.assert_close(k(x.clone().requires_grad_(), y, z), d)


cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")


@cuda
def test_torch_cuda_call_is_async_on_the_current_stream():
    n = 1 << 22
    k = vadd.compile(target="cuda", N=n)
    a, b = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
    c = k(a, b)
    assert c.device.type == "cuda" and c.shape == (n,) and c.dtype == torch.float32
    torch.cuda.synchronize()
    torch.testing.assert_close(c, a + b)
    # on a side stream: inputs made there, the kernel enqueued there after them
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        a2 = torch.randn(n, device="cuda") * 3
        b2 = a2 + 1
        c2 = k(a2, b2)
        d2 = c2 * 2  # torch's next op on the same stream sees the kernel's result
    s.synchronize()
    torch.testing.assert_close(d2, (a2 + b2) * 2)
    c3 = k(a, b, sync=True)  # waits
    assert torch.cuda.current_stream().query()
    torch.testing.assert_close(c3, a + b)


@cuda
def test_torch_cuda_explicit_stream_waits_for_the_producer():
    n = 1 << 24
    k = vadd.compile(target="cuda", N=n)
    other = torch.cuda.Stream()
    for _ in range(3):
        a = torch.randn(n, device="cuda")
        for _ in range(10):  # keep the current stream busy, so an unordered launch would read stale a
            a = a * 1.0001
        b = torch.ones(n, device="cuda")
        c = k(a, b, stream=other.cuda_stream, sync=True)
        torch.testing.assert_close(c, a + b)


@cuda
def test_torch_cuda_errors_and_plan():
    k = vadd.compile(target="cuda", N=1024)
    a, b = torch.randn(1024, device="cuda"), torch.randn(1024, device="cuda")
    torch.testing.assert_close(k(a, b), a + b)
    with pytest.raises(tilec.UsageError, match="is a tensor on device 'cpu', but kernel 'vadd' runs on 'cuda'"):
        k(a.cpu(), b)
    with pytest.raises(tilec.UsageError, match="argument 'B' has size 512 in dimension 0, expected 1024"):
        k(a, b[:512])
    with pytest.raises(tilec.UsageError, match="argument 'A' is not contiguous"):
        k(torch.randn(2048, device="cuda")[::2], b)
    with pytest.raises(tilec.UsageError, match="argument 'A' has dtype float16, expected float32"):
        k(a.half(), b)
    torch.testing.assert_close(k(a, b, sync=True), a + b)

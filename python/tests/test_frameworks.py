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

# Kernels from a package (tests/compat_scripts/mylib), imported absolutely; the package imports
# its helpers relatively.
import numpy as np

from mylib import make_row_sum, make_scaler
from mylib.tiling import OFFSET

scaler = make_scaler(100, factor=3.0)
k = scaler(rows=6)
x = np.random.randn(6, 100).astype(np.float32)
np.testing.assert_allclose(k(x), x * 3.0 + OFFSET, rtol=1e-6, atol=1e-6)

rs = make_row_sum(50)(9)
x = np.random.randn(9, 50).astype(np.float32)
np.testing.assert_allclose(rs(x), x.sum(axis=1), rtol=1e-5, atol=1e-5)
print("library_kernels: ok")

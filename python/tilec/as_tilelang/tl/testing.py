"""tilelang.testing: main, requires_cuda*, set_random_seed, torch_assert_close.

requires_cuda holds where the layer runs TileLang's cuda kernels: on a CUDA device, or wherever
TILEC_AS_TILELANG_TARGET names a target (the cpu, the cuda emulator). The compute version is the
device's, or, without one, tilec's default CUDA target's (9.0), as tilec's device queries answer.
"""
import inspect
import os
import random
import sys

import numpy as np

from .._errors import missing_attr
from .utils.tensor import torch_assert_close  # noqa: F401


def main():
    import pytest

    test_file = inspect.getsourcefile(sys._getframe(1))
    sys.exit(pytest.main([test_file] + sys.argv[1:]))


def set_random_seed(seed: int = 42) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch = sys.modules.get("torch")
    if torch is None:
        try:
            import torch
        except ImportError:
            return
    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)


def _cuda_device():
    import tilec

    return "cuda" in tilec.available_targets()


def _cuda_reason():
    if _cuda_device() or os.environ.get("TILEC_AS_TILELANG_TARGET"):
        return None
    return "no CUDA device (TILEC_AS_TILELANG_TARGET=cpu runs cuda kernels on tilec's cpu target)"


def _compute_version():
    torch = None
    try:
        import torch
    except ImportError:
        pass
    if torch is not None and torch.cuda.is_available():
        return tuple(torch.cuda.get_device_capability())
    return (9, 0)


class _Requirement:
    """A pytest skip mark usable as @requires_x, requires_x(func) and requires_x.marks()."""

    def __init__(self, reason_fn):
        self.reason_fn = reason_fn

    def marks(self):
        import pytest

        reason = self.reason_fn()
        return [pytest.mark.skipif(reason is not None, reason=reason or "")]

    def __call__(self, func):
        for m in self.marks():
            func = m(func)
        return func


requires_cuda = _Requirement(_cuda_reason)
requires_gpu = requires_cuda
requires_rocm = _Requirement(lambda: "tilec has no ROCm target")
requires_metal = _Requirement(lambda: None)
requires_package = lambda *names: _Requirement(lambda: None)  # noqa: E731


def requires_cuda_compute_version(major_version, minor_version=0, mode="ge"):
    want = (major_version, minor_version)
    ops = {"ge": lambda a, b: a >= b, "gt": lambda a, b: a > b, "le": lambda a, b: a <= b,
           "lt": lambda a, b: a < b, "eq": lambda a, b: a == b}

    def reason():
        r = _cuda_reason()
        if r:
            return r
        have = _compute_version()
        if not ops[mode](have, want):
            return f"Requires CUDA compute {mode} {major_version}.{minor_version}, have {have[0]}.{have[1]}"
        return None

    return _Requirement(reason)


def requires_cuda_compute_version_ge(major_version, minor_version=0):
    return requires_cuda_compute_version(major_version, minor_version, "ge")


def requires_cuda_compute_version_gt(major_version, minor_version=0):
    return requires_cuda_compute_version(major_version, minor_version, "gt")


def requires_cuda_compute_version_eq(major_version, minor_version=0):
    return requires_cuda_compute_version(major_version, minor_version, "eq")


def requires_cuda_compute_version_lt(major_version, minor_version=0):
    return requires_cuda_compute_version(major_version, minor_version, "lt")


def requires_cuda_compute_version_le(major_version, minor_version=0):
    return requires_cuda_compute_version(major_version, minor_version, "le")


def __getattr__(name):
    missing_attr("tilelang.testing", name)

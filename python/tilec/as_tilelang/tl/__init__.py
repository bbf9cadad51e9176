"""`import tilelang` under tilec's compatibility layer (python -m tilec.as_tilelang): TileLang's
Python API on tilec. Nothing here is TileLang's code; see docs/tilelang-compat.md."""
import importlib
import os

import tilec as _tilec

from .._errors import missing_attr
from .._jit import JITKernel, compile, jit  # noqa: F401,A004
from .transform import PassConfigKey  # noqa: F401
from .utils.tensor import TensorSupplyType  # noqa: F401
from . import language  # noqa: F401
from .autotuner import autotune  # noqa: F401,E402

__version__ = f"0.1.15+tilec.{_tilec.__version__}"
lazy_jit = jit
_SUBMODULES = ("language", "profiler", "testing", "env", "transform", "utils", "cache", "math", "autotuner")


def disable_cache():
    """tilec's disk kernel cache off for kernels compiled from now on (TILEC_DISABLE_CACHE=1; the
    cache is keyed by content, so results never depend on it)."""
    os.environ["TILEC_DISABLE_CACHE"] = "1"


def enable_cache():
    os.environ.pop("TILEC_DISABLE_CACHE", None)


def is_cache_enabled():
    return not os.environ.get("TILEC_DISABLE_CACHE")


def clear_cache():
    """Nothing to do: tilec's cache entries are keyed by the program, target and toolchain."""


def set_log_level(level):
    """Accepted; tilec's compatibility layer logs nothing."""


def __getattr__(name):
    if name in _SUBMODULES:
        return importlib.import_module(f"tilelang.{name}")
    missing_attr("tilelang", name)

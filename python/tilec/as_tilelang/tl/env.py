"""tilelang.env: the environment TileLang reads, as attributes (os.environ, read when asked)."""
import os

from .._errors import UnsupportedAttribute, script_line

_DEFAULTS = {"TILELANG_CACHE_DIR": os.path.expanduser("~/.tilelang/cache"), "TILELANG_TMP_DIR": None,
             "TILELANG_PRINT_ON_COMPILATION": "0", "TILELANG_AUTO_TUNING_CPU_COUNTS": "-1",
             "TILELANG_AUTO_TUNING_MAX_CPU_COUNT": "-1", "CUDA_HOME": None, "ROCM_HOME": None,
             "CUTLASS_INCLUDE_DIR": None, "TVM_IMPORT_PYTHON_PATH": None}


class Environment:
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        if name in _DEFAULTS or name.startswith("TILELANG_"):
            return os.environ.get(name, _DEFAULTS.get(name))
        raise UnsupportedAttribute(f"tilelang.env.{name} is not supported by tilec", script_line())

    def is_cache_enabled(self):
        return not os.environ.get("TILEC_DISABLE_CACHE")

    def disable_cache(self):
        os.environ["TILEC_DISABLE_CACHE"] = "1"

    def enable_cache(self):
        os.environ.pop("TILEC_DISABLE_CACHE", None)


env = Environment()


def __getattr__(name):
    return getattr(env, name)

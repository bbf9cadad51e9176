"""TileLang programs run unmodified with tilec as the engine.

    python -m tilec.as_tilelang SCRIPT.py [args...]
    python -m tilec.as_tilelang -m pytest PATH...

or, in a program, `tilec.as_tilelang.install()` before `import tilelang`. An import hook (a
sys.meta_path finder) serves `tilelang` and `tilelang.*` from tilec.as_tilelang.tl; nothing named
tilelang is installed, and an installed TileLang is neither imported nor changed (while the hook
is installed, `import tilelang` is tilec's). See docs/tilelang-compat.md.
"""
import importlib
import importlib.abc
import importlib.util
import sys

from ._errors import CompatError, UnsupportedImport, script_line  # noqa: F401

__all__ = ["install", "uninstall", "installed", "CompatError"]

_PREFIX = "tilec.as_tilelang.tl"


class _Alias(importlib.abc.Loader):
    def __init__(self, real):
        self.real = real

    def create_module(self, spec):
        return importlib.import_module(self.real)

    def exec_module(self, module):
        pass


class TilelangFinder(importlib.abc.MetaPathFinder):
    """Serves `tilelang[.X]` as tilec.as_tilelang.tl[.X]; a module the layer lacks is an error
    naming it and the importing line."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "tilelang" and not fullname.startswith("tilelang."):
            return None
        real = _PREFIX + fullname[len("tilelang"):]
        try:
            spec = importlib.util.find_spec(real)
        except ModuleNotFoundError:
            spec = None
        if spec is None:
            raise UnsupportedImport(f"'import {fullname}': {fullname} is not provided by tilec's TileLang "
                                    "compatibility layer", script_line())
        return importlib.util.spec_from_loader(fullname, _Alias(real),
                                               is_package=spec.submodule_search_locations is not None)


_finder = TilelangFinder()


def installed():
    return _finder in sys.meta_path


def install():
    """From now on `import tilelang` in this process is tilec's compatibility layer."""
    if _finder not in sys.meta_path:
        for name in [m for m in sys.modules if m == "tilelang" or m.startswith("tilelang.")]:
            del sys.modules[name]  # a real TileLang imported earlier stays what its importers hold
        sys.meta_path.insert(0, _finder)


def uninstall():
    if _finder in sys.meta_path:
        sys.meta_path.remove(_finder)
    for name in [m for m in sys.modules if m == "tilelang" or m.startswith("tilelang.")]:
        del sys.modules[name]

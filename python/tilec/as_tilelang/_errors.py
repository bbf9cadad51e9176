"""The compatibility layer's one error: a TileLang API or construct tilec cannot honour, named with
the script line that reached it."""
import os
import sys

_PKG = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # .../tilec


def _outside(filename):
    """Whether a frame's file is the user's: not tilec's, not Python's import machinery."""
    if not filename or filename.startswith("<frozen"):
        return False  # <frozen importlib._bootstrap>; <string> and <stdin> are the user's
    if filename.startswith("<"):
        return True
    f = os.path.abspath(filename)
    if f.startswith(_PKG + os.sep):
        return False
    return os.path.basename(f) != "runpy.py" and os.sep + "importlib" + os.sep not in f


def script_line(skip=0):
    """'file:line' of the innermost frame outside tilec and Python's import machinery (the user's
    line), or ''."""
    f = sys._getframe(1 + skip)
    while f is not None:
        if _outside(f.f_code.co_filename):
            return f"{_rel(f.f_code.co_filename)}:{f.f_lineno}"
        f = f.f_back
    return ""


def _rel(path):
    try:
        r = os.path.relpath(path)
        return r if not r.startswith("..") else path
    except ValueError:
        return path


class CompatError(Exception):
    """Something tilec's TileLang compatibility layer cannot honour. str(e) is one line:
    'FILE:LINE: error: WHAT (tilec.as_tilelang)'."""

    def __init__(self, what, where=None):
        self.what = what
        self.where = script_line(1) if where is None else where
        prefix = f"{self.where}: " if self.where else ""
        super().__init__(f"{prefix}error: {what} (tilec.as_tilelang)")


class UnsupportedImport(CompatError, ImportError):
    pass


class UnsupportedAttribute(CompatError, AttributeError):
    pass


def unsupported(api, why="", where=None):
    """The error for a TileLang API tilec does not provide."""
    return CompatError(f"{api} is not supported by tilec{': ' + why if why else ''}", where)


def missing_attr(module, name):
    """__getattr__ of a served tilelang module: a clear error naming tilelang.X.NAME."""
    if name.startswith("__"):
        raise AttributeError(name)
    f = sys._getframe(1)
    user = f.f_back  # the frame whose getattr this is
    try:
        import dis

        from_import = user is not None and user.f_code.co_code[user.f_lasti] == dis.opmap["IMPORT_FROM"]
    except (IndexError, KeyError, AttributeError):
        from_import = False
    if from_import:  # `from tilelang.X import NAME` of a module (not a package)
        raise UnsupportedImport(f"'from {module} import {name}': {module}.{name} is not provided by tilec's "
                                "TileLang compatibility layer", script_line(1))
    for _ in range(3):  # `from tilelang import NAME`: an AttributeError there would become
        f = f.f_back    # Python's "cannot import name", losing this message
        if f is None:
            break
        if f.f_code.co_name == "_handle_fromlist":
            raise UnsupportedImport(f"'from {module} import {name}': {module}.{name} is not provided by tilec's "
                                    "TileLang compatibility layer", script_line(1))
    raise UnsupportedAttribute(f"{module}.{name} is not supported by tilec", script_line(1))

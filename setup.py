"""Build hooks for `pip install .` / `pip wheel .` (the metadata is in pyproject.toml).

build_py runs `make` for libtilec.so and copies it into the package (tilec/libtilec.so), where
tilec/_lib.py looks first; the wheel is tagged for this platform (py3-none-<platform>: ctypes
needs no particular Python ABI, but the library is native code). The make build folder is
$TILEC_PY_BUILD if set (tests/e2e/pip_install.sh points it at an existing build, so its objects
are reused), else the checkout's build/ (what `make` builds; an up-to-date build is reused).
python/setup.py (`pip install ./python`) uses the same hooks.
"""
import os
import shutil
import subprocess

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

try:  # setuptools >= 70.1 has its own; before, the wheel package's
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:
    from wheel.bdist_wheel import bdist_wheel

ROOT = os.path.dirname(os.path.abspath(__file__))


def build_folder(root):
    """The make build folder: relative to root when inside it (so make's .d files apply)."""
    path = os.path.join(root, os.environ.get("TILEC_PY_BUILD") or "build")
    rel = os.path.relpath(path, root)
    return path if rel.startswith("..") else rel


def make_library(root):
    """Builds libtilec.so with the repository's Makefile; returns its path."""
    build = build_folder(root)
    if not os.path.isfile(os.path.join(root, "Makefile")):
        raise RuntimeError(f"tilec: no Makefile in {root}: libtilec.so cannot be built here")
    make = shutil.which("make")
    if not make:
        raise RuntimeError("tilec: building libtilec.so needs make and a C compiler (Debian: apt-get install make gcc libdlpack-dev)")
    target = os.path.join(build, "libtilec.so")
    jobs = os.environ.get("TILEC_PY_JOBS") or str(os.cpu_count() or 1)
    # SAN= and OPT=: a sanitizer or debug setting in the environment must not reach the wheel.
    cmd = [make, "-s", "-j" + jobs, "BUILD=" + build, "SAN=", "OPT=-O2 -g", target]
    print("tilec: " + " ".join(cmd), flush=True)
    subprocess.check_call(cmd, cwd=root)
    return os.path.join(root, target)


class BuildWithLibrary(build_py):
    """build_py, then libtilec.so from make into the package."""
    root = ROOT

    def run(self):
        super().run()
        lib = make_library(self.root)
        dest = os.path.join(self.build_lib, "tilec", "libtilec.so")
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        shutil.copyfile(lib, dest)
        os.chmod(dest, 0o755)
        strip = shutil.which("strip")
        if strip:  # the debug info stays in the build folder's copy
            subprocess.call([strip, "--strip-debug", dest])


class BinaryDistribution(Distribution):
    """Carries native code: installed into platlib, and the wheel is not pure."""

    def has_ext_modules(self):
        return True


class PlatformWheel(bdist_wheel):
    """A platform wheel (it carries native code) usable by any Python 3 (ctypes, no extension)."""

    def finalize_options(self):
        super().finalize_options()
        self.root_is_pure = False

    def get_tag(self):
        plat = super().get_tag()[2]
        return "py3", "none", plat


def tilec_setup(root, **kw):
    cmd = type("BuildWithLibrary", (BuildWithLibrary,), {"root": root})
    # setuptools' own build files and its .egg-info go under the make build folder, not beside the
    # sources, where two builds at once would share them (egg_info wants the folder to exist)
    base = os.path.join(root, build_folder(root), "python")
    os.makedirs(base, exist_ok=True)
    setup(cmdclass={"build_py": cmd, "bdist_wheel": PlatformWheel}, distclass=BinaryDistribution,
          options={"build": {"build_base": base}, "egg_info": {"egg_base": base}},
          **kw)


if __name__ == "__main__":
    tilec_setup(ROOT)

"""`pip install ./python` in a checkout: the same package as `pip install .` from the repository
root (../setup.py builds libtilec.so with make and ships it inside the package). The metadata
is in pyproject.toml beside this file."""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.dont_write_bytecode = True  # no __pycache__ in the repository root
from setup import tilec_setup  # noqa: E402  (the repository root's setup.py)

if __name__ == "__main__":
    tilec_setup(ROOT)

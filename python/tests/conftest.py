import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "python"))
os.environ.setdefault("TILEC_CACHE_DIR", os.path.join(os.environ.get("TMPDIR", "/tmp"), "tilec-pytest-cache"))


def example(name):
    return os.path.join(REPO, "examples", name)

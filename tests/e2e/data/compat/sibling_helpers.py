# Helpers that sibling_import.py imports with `from sibling_helpers import ...` (a file beside
# the program). It defines no kernel; its names are its own: OFFSET below is not the program's.
import tilelang.language as T

OFFSET = 3.0
_SUPPORTED = (16, 32, 64)


def check_block(block):
    assert block in _SUPPORTED, f"block must be one of {_SUPPORTED}, got {block}"


def shifted(x):
    # reads this module's OFFSET, whatever the importing program calls OFFSET
    return x * 2 + OFFSET


def cast_f32(x):
    return T.cast(x, "float32")

# Another module of sibling_pkg; bits.py reads SCALE with `from .scales import SCALE`.
SCALE = 2


def scaled(x):
    return x * SCALE

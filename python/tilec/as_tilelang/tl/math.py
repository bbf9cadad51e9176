"""tilelang.math: compile-time helpers (tilec's reader knows them inside kernels too)."""
from .._errors import missing_attr


def next_power_of_2(x):
    return 1 << (int(x) - 1).bit_length()


def cdiv(a, b):
    return -(-a // b)


def __getattr__(name):
    missing_attr("tilelang.math", name)

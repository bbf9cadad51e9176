"""`tilec.layout` (tilelang.layout): layouts have a meaning only inside kernels, which tilec reads
from their source."""


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)

    def only_in_kernels(*args, **kwargs):
        raise RuntimeError(f"tilec.layout.{name} has a meaning only inside a kernel")

    return only_in_kernels

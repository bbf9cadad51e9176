"""tilelang.utils (the parts the examples use: tilelang.utils.tensor)."""
from ..._errors import missing_attr
from .tensor import TensorSupplyType, map_torch_type, torch_assert_close  # noqa: F401


def __getattr__(name):
    if name == "tensor":
        from . import tensor

        return tensor
    missing_attr("tilelang.utils", name)

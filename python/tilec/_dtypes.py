"""tilec dtype names <-> numpy, torch and DLPack."""
import numpy as np

from ._lib import kDLBfloat, kDLFloat, kDLInt, kDLUInt

_NUMPY = {
    "float16": np.float16, "float32": np.float32, "float64": np.float64,
    "int8": np.int8, "int16": np.int16, "int32": np.int32, "int64": np.int64,
    "uint8": np.uint8, "uint16": np.uint16, "uint32": np.uint32, "uint64": np.uint64,
    "bool": np.bool_,
}
# Types DLPack cannot name travel as their storage (tilec.h: 8 bits; 4-bit types two per byte).
_STORAGE = {"float8_e4m3fn": np.uint8, "float8_e4m3fnuz": np.uint8, "float8_e5m2": np.uint8,
            "float8_e5m2fnuz": np.uint8, "float8_e8m0fnu": np.uint8}


def numpy_dtype(name):
    """The numpy dtype tilec's `name` is stored as on the host."""
    if name in _NUMPY:
        return np.dtype(_NUMPY[name])
    if name in _STORAGE:
        return np.dtype(_STORAGE[name])
    if name == "bfloat16":
        try:
            import ml_dtypes

            return np.dtype(ml_dtypes.bfloat16)
        except ImportError:
            return np.dtype(np.uint16)  # its raw bits
    raise TypeError(f"tilec: no numpy dtype for {name}")


def nbytes(name, numel):
    if name in ("int4", "uint4", "float4_e2m1fn"):
        return (numel + 1) // 2
    return numel * numpy_dtype(name).itemsize


def dl_of_numpy(dt):
    """(code, bits) of a numpy dtype, for arrays numpy cannot export through DLPack itself."""
    dt = np.dtype(dt)
    if dt.name == "bfloat16":
        return kDLBfloat, 16
    if dt.kind == "f":
        return kDLFloat, dt.itemsize * 8
    if dt.kind == "i":
        return kDLInt, dt.itemsize * 8
    if dt.kind == "u":
        return kDLUInt, dt.itemsize * 8
    if dt.kind == "b":
        return kDLUInt, 8  # bool travels as uint8 where the DLPack header has no kDLBool
    if dt.name.startswith("float8"):
        return kDLUInt, 8
    raise TypeError(f"tilec: numpy dtype {dt} has no DLPack form")


def torch_dtype(name):
    import torch

    table = {"float16": torch.float16, "bfloat16": torch.bfloat16, "float32": torch.float32,
             "float64": torch.float64, "int8": torch.int8, "int16": torch.int16, "int32": torch.int32,
             "int64": torch.int64, "uint8": torch.uint8, "bool": torch.bool}
    if name in table:
        return table[name]
    if name in _STORAGE:
        return torch.uint8
    raise TypeError(f"tilec: no torch dtype for {name}")

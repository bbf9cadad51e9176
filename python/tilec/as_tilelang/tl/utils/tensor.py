"""tilelang.utils.tensor: input supplies and the closeness check, over numpy, or torch where the
tensors are torch's."""
import enum

import numpy as np

from ..._errors import CompatError, missing_attr


class TensorSupplyType(enum.IntEnum):
    Integer = 1
    Uniform = 2
    Normal = 3
    Randn = 4
    Zero = 5
    One = 6
    Auto = 7


def _torch():
    try:
        import torch

        return torch
    except ImportError:
        return None


def map_torch_type(name):
    torch = _torch()
    if torch is None:
        raise CompatError("map_torch_type needs torch, which is not installed")
    from tilec import _dtypes

    return _dtypes.torch_dtype(str(name))


def supply(param, kind, device=None):
    """A tensor for a kernel parameter (tilec Param): torch on `device` when torch is present and
    a device is given, else numpy. Integer: integers in [-2, 2] ([0, 4] unsigned); Uniform: in
    [-1, 1); Normal and Randn: standard normal; Zero, One; Auto: Integer for integer and bool
    dtypes, Uniform for floats."""
    from tilec import _dtypes

    if any(s < 0 for s in param.shape):
        names = [d for s, d in zip(param.shape, param.dims) if s < 0]
        raise CompatError(f"the profiler cannot make parameter '{param.name}': its size '{names[0]}' is symbolic; "
                          "pass input_tensors=[...]")
    kind = TensorSupplyType(kind if kind is not None else TensorSupplyType.Auto)
    dt = param.dtype
    is_int = dt.startswith(("int", "uint")) or dt == "bool"
    if kind == TensorSupplyType.Auto:
        kind = TensorSupplyType.Integer if is_int else TensorSupplyType.Uniform
    shape = tuple(param.shape)
    if kind == TensorSupplyType.Zero:
        a = np.zeros(shape)
    elif kind == TensorSupplyType.One:
        a = np.ones(shape)
    elif kind == TensorSupplyType.Integer:
        a = np.random.randint(0, 5, shape) if dt.startswith("uint") or dt == "bool" else np.random.randint(-2, 3, shape)
        if dt == "bool":
            a = a % 2
    elif kind == TensorSupplyType.Uniform:
        a = np.random.uniform(-1.0, 1.0, shape)
    else:
        a = np.random.standard_normal(shape)
    torch = _torch() if device is not None else None
    if torch is not None:
        t = torch.from_numpy(np.ascontiguousarray(a, dtype=np.float64 if not is_int else np.int64))
        return t.to(device=device, dtype=_dtypes.torch_dtype(dt))
    return np.ascontiguousarray(a.astype(_dtypes.numpy_dtype(dt)))


def to_numpy(x):
    if hasattr(x, "detach") and type(x).__module__.split(".")[0] == "torch":
        x = x.detach()
        if x.dtype.is_floating_point:
            x = x.float()
        return x.cpu().numpy()
    if hasattr(x, "numpy") and not isinstance(x, np.ndarray):
        x = x.numpy()
    return np.asarray(x)


def torch_assert_close(tensor_a, tensor_b, rtol=1e-2, atol=1e-3, max_mismatched_ratio=0.001, verbose=False,
                       equal_nan=True, check_device=True, check_dtype=True, check_layout=True,
                       check_stride=False, base_name="LHS", ref_name="RHS"):
    """Passes when at most max_mismatched_ratio of the elements differ by more than atol + rtol *
    |ref| (TileLang's rule); shapes must match. Works on numpy arrays and torch tensors alike."""
    a = to_numpy(tensor_a).astype(np.float64)
    b = to_numpy(tensor_b).astype(np.float64)
    if a.shape != b.shape:
        raise AssertionError(f"shape mismatch: {base_name} {a.shape} vs {ref_name} {b.shape}")
    close = np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)
    bad = int(close.size - np.count_nonzero(close))
    total = max(1, close.size)
    if verbose:
        print(f"{base_name} vs {ref_name}: {bad} of {close.size} elements differ beyond atol={atol}, rtol={rtol}")
    if bad / total > max_mismatched_ratio:
        diff = np.abs(a - b)
        i = np.unravel_index(int(np.nanargmax(np.where(np.isnan(diff), -1, diff))), diff.shape) if diff.size else ()
        raise AssertionError(
            f"Too many mismatched elements: {bad} of {close.size} ({bad / total:.2%}) > {max_mismatched_ratio:.2%} allowed "
            f"(atol={atol}, rtol={rtol}). Greatest absolute difference: {diff[i]} at index {tuple(int(x) for x in i)} "
            f"({base_name}={a[i]}, {ref_name}={b[i]})")


def __getattr__(name):
    missing_attr("tilelang.utils.tensor", name)

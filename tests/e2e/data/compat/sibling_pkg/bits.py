# The shape of quantize/quantization.py's _tir_packed_to_unsigned_convert: a factory that
# returns the TIR expression builder, using tvm.tirx.const and .astype on expressions.
from tilelang import tvm as tvm

from .scales import SCALE


def unpack_unsigned(storage_type="uint", storage_nbit=8):
    storage_dtype = storage_type + str(storage_nbit)

    def f_convert(nbit: int, val: tvm.tirx.PrimExpr, pos: tvm.tirx.PrimExpr, dtype: str):
        assert val.dtype == storage_dtype, f"{val.dtype} != {storage_dtype}"
        mask = tvm.tirx.const((1 << nbit) - 1, storage_dtype)
        return ((val >> (pos * nbit).astype(storage_dtype)) & mask).astype(dtype) * SCALE

    return f_convert

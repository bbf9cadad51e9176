# T.reinterpret(value, dtype) and tvm.tirx.reinterpret(dtype, value), tirx.const / Cast / Select /
# Min (dequantize_gemm/, deepseek_v32/topk_selector.py): bits read as another dtype of the
# same width. B holds the float16 bits of A flipped in sign by an XOR and read back as float16,
# C the exponent field of A's float32 value, D a uint8 nibble unpacked through int8.
import tilelang
import tilelang.language as T
from tvm import tirx


@tilelang.jit
def bits(N):
    @T.prim_func
    def main(A: T.Tensor((N,), "float16"), Q: T.Tensor((N,), "uint8"), B: T.Tensor((N,), "float16"),
             C: T.Tensor((N,), "int32"), D: T.Tensor((N,), "int8")):
        with T.Kernel(1, threads=32) as bx:
            for i in T.Parallel(N):
                u = T.reinterpret(A[i], T.uint16)
                B[i] = T.reinterpret(u ^ tirx.const(0x8000, T.uint16), T.float16)
                f = T.cast(A[i], T.float32)
                e = (tirx.reinterpret(T.uint32, f) >> tirx.const(23, T.uint32)) & tirx.const(0xFF, T.uint32)
                C[i] = tirx.Min(tirx.Cast(T.int32, e), 200)
                s = tirx.reinterpret(T.int8, Q[i] << tirx.const(4, T.uint8))
                D[i] = tirx.Select(s >= 0, s >> tirx.const(4, T.int8), s >> tirx.const(4, T.int8))

    return main

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


# More widths and dtypes: bfloat16 <-> int16, float64 <-> uint64, float8_e4m3fn <-> uint8 and
# float32 <-> int32, each changed in its integer form (sign or low bits) and read back.
@tilelang.jit
def widths(N):
    @T.prim_func
    def main(H: T.Tensor((N,), "bfloat16"), F: T.Tensor((N,), "float64"), E: T.Tensor((N,), "float8_e4m3fn"),
             G: T.Tensor((N,), "float32"), Ho: T.Tensor((N,), "bfloat16"), Fo: T.Tensor((N,), "float64"),
             Eo: T.Tensor((N,), "uint8"), Go: T.Tensor((N,), "int32")):
        with T.Kernel(1, threads=32) as bx:
            for i in T.Parallel(N):
                Ho[i] = T.reinterpret(T.reinterpret(H[i], T.int16) ^ tirx.const(-32768, T.int16), T.bfloat16)
                Fo[i] = T.reinterpret((T.reinterpret(F[i], T.uint64) >> tirx.const(16, T.uint64)) << tirx.const(16, T.uint64), T.float64)
                Eo[i] = T.reinterpret(E[i], T.uint8) ^ tirx.const(0x80, T.uint8)
                Go[i] = T.reinterpret(G[i], T.int32) >> tirx.const(8, T.int32)

    return main


# The same without float64 (Metal has none): bfloat16 <-> int16, float8_e4m3fn <-> uint8 and
# float32 <-> int32.
@tilelang.jit
def narrow_widths(N):
    @T.prim_func
    def main(H: T.Tensor((N,), "bfloat16"), E: T.Tensor((N,), "float8_e4m3fn"), G: T.Tensor((N,), "float32"),
             Ho: T.Tensor((N,), "bfloat16"), Eo: T.Tensor((N,), "uint8"), Go: T.Tensor((N,), "int32"),
             Gf: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            for i in T.Parallel(N):
                Ho[i] = T.reinterpret(T.reinterpret(H[i], T.int16) ^ tirx.const(-32768, T.int16), T.bfloat16)
                Eo[i] = T.reinterpret(E[i], T.uint8) ^ tirx.const(0x80, T.uint8)
                Go[i] = T.reinterpret(G[i], T.int32) >> tirx.const(8, T.int32)
                Gf[i] = T.reinterpret(T.reinterpret(G[i], T.uint32) & tirx.const(0xFFFFF000, T.uint32), T.float32)

    return main

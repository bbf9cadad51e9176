# `from NAME import ...` of a sibling package (NAME/__init__.py beside the program; TileLang's
# dequantize_gemm examples import `from quantize import _tir_packed_to_unsigned_convert`):
# B unpacks the 4-bit fields of A with the package's helpers, Ref computes the same inline.
import tilelang
import tilelang.language as T

from sibling_pkg import unpack_unsigned, scaled


@tilelang.jit
def unpack4(N, block=32):
    num_bits = 4

    @T.prim_func
    def main(A: T.Tensor((N // 2,), "uint8"), B: T.Tensor((N,), "float32"), Ref: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(N, block), threads=32) as bx:
            for i in T.Parallel(block):
                e = bx * block + i
                # both nibbles set: the random inputs are small
                packed = T.cast(A[e // 2] * 16 + A[(e // 2 + 1) % (N // 2)] % 16, "uint8")
                B[e] = scaled(unpack_unsigned("uint", 8)(num_bits, packed, e % 2, "float32"))
                Ref[e] = T.cast((packed >> T.cast((e % 2) * 4, "uint8")) & T.uint8(15), "float32") * 4

    return main

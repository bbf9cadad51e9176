# T.shift_left / T.shift_right (TVM's left_shift / right_shift; dequantize_gemm's mxfp4 example
# scales by T.shift_left(1, Scale[..])): B and C with them, BRef and CRef with << and >>.
# 8-bit operands shift as if promoted to 32 bits (C and CUDA), so counts of 8 and more are
# defined: U and V with them, URef and VRef through int32.
import tilelang
import tilelang.language as T


@tilelang.jit
def shifts(N, block=32):

    @T.prim_func
    def main(S: T.Tensor((N,), "uint8"), B: T.Tensor((N,), "int32"),
             C: T.Tensor((N,), "float32"), BRef: T.Tensor((N,), "int32"), CRef: T.Tensor((N,), "float32"),
             U: T.Tensor((N,), "uint8"), URef: T.Tensor((N,), "uint8"), V: T.Tensor((N,), "int8"),
             VRef: T.Tensor((N,), "int8")):
        with T.Kernel(T.ceildiv(N, block), threads=32) as bx:
            for i in T.Parallel(block):
                e = bx * block + i
                B[e] = T.shift_right(T.shift_left(T.cast(S[e], "int32") + 5, 3), 1)
                BRef[e] = ((T.cast(S[e], "int32") + 5) << 3) >> 1
                C[e] = T.cast(T.shift_left(1, S[e] % 8), "float32")
                CRef[e] = T.cast(1 << (S[e] % 8), "float32")
                U[e] = T.shift_left(T.cast(255, "uint8"), S[e] % 8 + 4)
                URef[e] = T.cast((T.cast(255, "int32") << T.cast(S[e] % 8 + 4, "int32")) & 255, "uint8")
                V[e] = T.shift_right(T.cast(-100, "int8"), T.cast(S[e] % 8 + 4, "int8"))
                VRef[e] = T.cast(T.cast(-100, "int32") >> T.cast(S[e] % 8 + 4, "int32"), "int8")

    return main

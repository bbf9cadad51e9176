# T.shift_left / T.shift_right (TVM's left_shift / right_shift; dequantize_gemm's mxfp4 example
# scales by T.shift_left(1, Scale[..])): B and C with them, BRef and CRef with << and >>.
import tilelang
import tilelang.language as T


@tilelang.jit
def shifts(N, block=32):

    @T.prim_func
    def main(S: T.Tensor((N,), "uint8"), B: T.Tensor((N,), "int32"),
             C: T.Tensor((N,), "float32"), BRef: T.Tensor((N,), "int32"), CRef: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(N, block), threads=32) as bx:
            for i in T.Parallel(block):
                e = bx * block + i
                B[e] = T.shift_right(T.shift_left(T.cast(S[e], "int32") + 5, 3), 1)
                BRef[e] = ((T.cast(S[e], "int32") + 5) << 3) >> 1
                C[e] = T.cast(T.shift_left(1, S[e] % 8), "float32")
                CRef[e] = T.cast(1 << (S[e] % 8), "float32")

    return main

# tilec: source --target metal --kernel-only
import tilelang.language as T


@T.prim_func
def fp8_gemm(A: T.Tensor((64, 64), "float8_e4m3fn"), B: T.Tensor((64, 64), "float8_e4m3fn"), C: T.Tensor((64, 64), "float32")):
    with T.Kernel(1, threads=128) as bx:
        A_s = T.alloc_shared((64, 64), "float8_e4m3fn")
        B_s = T.alloc_shared((64, 64), "float8_e4m3fn")
        C_f = T.alloc_fragment((64, 64), "float32")
        T.copy(A, A_s)
        T.copy(B, B_s)
        T.clear(C_f)
        T.gemm(A_s, B_s, C_f)
        T.copy(C_f, C)

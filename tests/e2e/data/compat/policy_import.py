# `from tilelang.tileop.base import GemmWarpPolicy`: the enum T.GemmWarpPolicy names.
import tilelang
import tilelang.language as T
from tilelang.tileop.base import GemmWarpPolicy

M, N, K = 64, 64, 32


@T.prim_func
def gemm_full_row(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), C: T.Tensor((M, N), "float32")):
    with T.Kernel(1, threads=128) as bx:
        A_s = T.alloc_shared((M, K), "float16")
        B_s = T.alloc_shared((K, N), "float16")
        C_f = T.alloc_fragment((M, N), "float32")
        T.copy(A, A_s)
        T.copy(B, B_s)
        T.gemm(A_s, B_s, C_f, clear_accum=True, policy=GemmWarpPolicy.FullRow)
        T.copy(C_f, C)

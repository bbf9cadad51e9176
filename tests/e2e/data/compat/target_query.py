# tvm.target.Target(...) and tilelang.rocm.target.target_is_gfx950 (dequantize_gemm's cdna4
# example builds a HIP target and its helper asks whether it is gfx950): B scales by the factor
# the target queries choose, Ref by the factors written out.
import tilelang
import tilelang.language as T
from tilelang import tvm as tvm
from tilelang.rocm.target import target_is_gfx950


def factor(desc):
    return 2.0 if target_is_gfx950(tvm.target.Target(desc)) else 3.0


@tilelang.jit
def scale(N, block=32):
    f = factor("hip -mcpu=gfx950") * 10 + factor("hip -mcpu=gfx942") + factor("cuda")

    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32"), Ref: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(N, block), threads=32) as bx:
            for i in T.Parallel(block):
                B[bx * block + i] = A[bx * block + i] * f
                Ref[bx * block + i] = A[bx * block + i] * 26.0

    return main

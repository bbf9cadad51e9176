# T.isnan / T.isinf / T.isfinite on values the kernel makes NaN and infinite (0 / 0, x / 0),
# with T.if_then_else over them; every backend must agree with the reference.
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def fp_classes(n=256, threads=128, dtype="float32"):

    @T.prim_func
    def main(A: T.Tensor((n,), dtype), B: T.Tensor((n,), "int32")):
        with T.Kernel(T.ceildiv(n, threads), threads=threads) as bx:
            for i in T.Parallel(threads):
                x = A[bx * threads + i]
                zero = x - x
                nan = zero / zero
                inf = (T.abs(x) + 1.0) / zero
                B[bx * threads + i] = (T.if_then_else(T.isnan(nan), 1, 0) + T.if_then_else(T.isinf(inf), 2, 0) +
                                       T.if_then_else(T.isfinite(x), 4, 0) + T.if_then_else(T.isinf(nan), 8, 0) +
                                       T.if_then_else(T.isnan(inf), 16, 0) + T.if_then_else(T.isfinite(inf), 32, 0) +
                                       T.if_then_else(T.isnan(x), 64, 0) + T.if_then_else(T.isinf(-inf), 128, 0))

    return main

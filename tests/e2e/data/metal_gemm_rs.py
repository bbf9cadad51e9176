"""Two chained GEMMs, the second with A from registers (attention's P * V without the softmax),
for the Metal tests (tests/e2e/metal.sh): S = A @ B over the block's rows, P = S rounded to
dtype, O = P @ V (or P @ V^T with trans_V: V stored as D x N). Both gemms use the FullRow
policy, so P is laid out like S, the accumulator it is copied from. On Metal 4 both run on
matmul2d when both can (the second with P as left-input cooperative tensors); when one cannot
(D = 48: N % 32 != 0 for the second), neither does.
"""
import tilelang
import tilelang.language as T


@tilelang.jit
def chain(M=128, N=64, K=32, D=64, block_M=64, threads=128, trans_V=False, dtype=T.float16, accum_dtype=T.float32):
    v_shape = (D, N) if trans_V else (N, D)

    @T.prim_func
    def main(
        A: T.Tensor((M, K), dtype),
        B: T.Tensor((K, N), dtype),
        V: T.Tensor(v_shape, dtype),
        O: T.Tensor((M, D), accum_dtype),
    ):
        with T.Kernel(T.ceildiv(M, block_M), threads=threads) as bx:
            A_shared = T.alloc_shared((block_M, K), dtype)
            B_shared = T.alloc_shared((K, N), dtype)
            V_shared = T.alloc_shared(v_shape, dtype)
            S = T.alloc_fragment((block_M, N), accum_dtype)
            P = T.alloc_fragment((block_M, N), dtype)
            O_local = T.alloc_fragment((block_M, D), accum_dtype)

            T.copy(A[bx * block_M, 0], A_shared)
            T.copy(B[0, 0], B_shared)
            T.copy(V[0, 0], V_shared)
            T.gemm(A_shared, B_shared, S, clear_accum=True, policy=T.GemmWarpPolicy.FullRow)
            T.copy(S, P)
            T.gemm(P, V_shared, O_local, transpose_B=trans_V, clear_accum=True, policy=T.GemmWarpPolicy.FullRow)
            T.copy(O_local, O[bx * block_M, 0])

    return main

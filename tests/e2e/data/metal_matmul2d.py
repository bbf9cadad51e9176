"""GEMM variants for the Metal 4 matmul2d tests (tests/e2e/metal.sh).

trans_A / trans_B store A as K x M and B as N x K. epilogue: "copy" stores C_local; "rows"
subtracts each row's maximum (T.reduce_max into a row fragment beside the matmul2d accumulator)
and applies a ReLU-like clamp in T.Parallel; "atomic" adds C_local into C with T.atomic_add.
staged=True also reads the A tile outside the gemm (A_shared summed into D), so the tile is more
than staging and the gemm keeps it (shared-staged); otherwise both tiles are pure staging
(direct-global).
"""
import tilelang
import tilelang.language as T


@tilelang.jit
def matmul(M=96, N=160, K=80, block_M=64, block_N=64, block_K=16, threads=128, trans_A=False, trans_B=False,
           epilogue="copy", staged=False, dtype=T.float16, accum_dtype=T.float32):
    a_shape = (K, M) if trans_A else (M, K)
    b_shape = (N, K) if trans_B else (K, N)
    a_tile = (block_K, block_M) if trans_A else (block_M, block_K)
    b_tile = (block_N, block_K) if trans_B else (block_K, block_N)

    @T.prim_func
    def main(
        A: T.Tensor(a_shape, dtype),
        B: T.Tensor(b_shape, dtype),
        C: T.Tensor((M, N), accum_dtype),
        D: T.Tensor((M, block_K), accum_dtype),
    ):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_shared = T.alloc_shared(a_tile, dtype)
            B_shared = T.alloc_shared(b_tile, dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            row_max = T.alloc_fragment((block_M,), accum_dtype)

            T.clear(C_local)
            for ko in T.serial(T.ceildiv(K, block_K)):
                if trans_A:
                    T.copy(A[ko * block_K, by * block_M], A_shared)
                else:
                    T.copy(A[by * block_M, ko * block_K], A_shared)
                if trans_B:
                    T.copy(B[bx * block_N, ko * block_K], B_shared)
                else:
                    T.copy(B[ko * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local, transpose_A=trans_A, transpose_B=trans_B)
                if staged and not trans_A:
                    if bx == 0 and ko == 0:
                        T.copy(A_shared, D[by * block_M, 0])

            if epilogue == "rows":
                T.reduce_max(C_local, row_max, dim=1)
                for i, j in T.Parallel(block_M, block_N):
                    C_local[i, j] = T.max(C_local[i, j] - row_max[i] * 0.5, 0.0)
            if epilogue == "atomic":
                T.atomic_add(C[by * block_M, bx * block_N], C_local)
            else:
                T.copy(C_local, C[by * block_M, bx * block_N])

    return main

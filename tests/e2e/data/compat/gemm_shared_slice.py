# T.gemm operands that are part of a shared tile, as sparse MLA writes them: Q_shared holds the
# nope and rope parts of each query side by side, and two gemms read Q_shared[:, :D] and
# Q_shared[:, D:]. The matrix instructions address whole tiles, so the GPU lowering copies such
# a slice to a tile of its own first (src/gpu/stage_operands.c).
#   split_q:   S = Q[:, :D] @ K^T + Q[:, D:] @ Kt^T over column slices of one shared tile (A)
#   b_columns: C = A @ B[:, c0:c0 + N], a column slice of a wider shared B tile
import tilelang
import tilelang.language as T


@tilelang.jit
def split_q(H=64, L=128, D=64, D_tail=32, block_N=64, threads=128):

    @T.prim_func
    def main(Q: T.Tensor((H, D + D_tail), T.float16), K: T.Tensor((L, D + D_tail), T.float16), S: T.Tensor((H, L), T.float32)):
        with T.Kernel(T.ceildiv(L, block_N), threads=threads) as bx:
            q = T.alloc_shared((H, D + D_tail), T.float16)
            k = T.alloc_shared((block_N, D), T.float16)
            kt = T.alloc_shared((block_N, D_tail), T.float16)
            acc = T.alloc_fragment((H, block_N), T.float32)
            T.copy(Q, q)
            T.copy(K[bx * block_N, 0], k)
            T.copy(K[bx * block_N, D], kt)
            T.gemm(q[:, :D], k, acc, transpose_B=True, clear_accum=True)
            T.gemm(q[:, D:], kt, acc, transpose_B=True)
            T.copy(acc, S[0, bx * block_N])
    return main


@tilelang.jit
def b_columns(M=64, N=64, K=64, c0=32, threads=128):

    @T.prim_func
    def main(A: T.Tensor((M, K), T.float16), B: T.Tensor((K, N + 64), T.float16), C: T.Tensor((M, N), T.float32)):
        with T.Kernel(1, threads=threads) as bx:
            a = T.alloc_shared((M, K), T.float16)
            b = T.alloc_shared((K, N + 64), T.float16)
            acc = T.alloc_fragment((M, N), T.float32)
            T.copy(A, a)
            T.copy(B, b)
            T.gemm(a, b[:, c0:c0 + N], acc, clear_accum=True)
            T.copy(acc, C)
    return main

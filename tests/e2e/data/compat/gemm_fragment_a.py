# A T.gemm whose A operand is a fragment laid out for other statements, not as the gemm's operand
# (registers serve only when A is laid out like the accumulator of an M x K gemm over the same
# warps). TileLang's dequantizing GEMMs and chunked linear attention compute A in a T.Parallel
# loop; attention backward passes cast the scores of a gemm over other warps. The GPU lowering
# then copies the fragment into a shared tile and lowers again (src/gpu/stage_operands.c).
#   scaled_gemm: C = (A * s[row]) @ B, A scaled in registers (transpose_A: A stored K x M)
#   two_gemms:   O = float16(Q @ K^T) @ V, the scores laid out over 1 x 4 warps (FullCol), the
#                second gemm over 4 x 1 (FullRow)
import tilelang
import tilelang.language as T


@tilelang.jit
def scaled_gemm(M=128, N=64, K=128, block_M=64, block_N=64, block_K=32, trans_A=False, threads=128):
    A_shape = (K, M) if trans_A else (M, K)
    a_tile = (block_K, block_M) if trans_A else (block_M, block_K)

    @T.prim_func
    def main(A: T.Tensor(A_shape, T.float16), B: T.Tensor((K, N), T.float16), S: T.Tensor((M,), T.float32),
             C: T.Tensor((M, N), T.float32)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            a = T.alloc_shared(a_tile, T.float16)
            b = T.alloc_shared((block_K, block_N), T.float16)
            s = T.alloc_shared((block_M,), T.float32)
            a_scaled = T.alloc_fragment(a_tile, T.float16)
            acc = T.alloc_fragment((block_M, block_N), T.float32)
            T.copy(S[by * block_M], s)
            T.clear(acc)
            for k in range(T.ceildiv(K, block_K)):
                if trans_A:
                    T.copy(A[k * block_K, by * block_M], a)
                    for i, j in T.Parallel(block_K, block_M):
                        a_scaled[i, j] = a[i, j] * s[j]
                else:
                    T.copy(A[by * block_M, k * block_K], a)
                    for i, j in T.Parallel(block_M, block_K):
                        a_scaled[i, j] = a[i, j] * s[i]
                T.copy(B[k * block_K, bx * block_N], b)
                T.gemm(a_scaled, b, acc, transpose_A=trans_A)
            T.copy(acc, C[by * block_M, bx * block_N])
    return main


@tilelang.jit
def two_gemms(L=128, D=64, block_M=64, block_N=64, threads=128):

    @T.prim_func
    def main(Q: T.Tensor((L, D), T.float16), Kt: T.Tensor((L, D), T.float16), V: T.Tensor((L, D), T.float16),
             O: T.Tensor((L, D), T.float32)):
        with T.Kernel(T.ceildiv(L, block_M), threads=threads) as bx:
            q = T.alloc_shared((block_M, D), T.float16)
            k = T.alloc_shared((block_N, D), T.float16)
            v = T.alloc_shared((block_N, D), T.float16)
            scores = T.alloc_fragment((block_M, block_N), T.float32)
            p = T.alloc_fragment((block_M, block_N), T.float16)
            out = T.alloc_fragment((block_M, D), T.float32)
            T.copy(Q[bx * block_M, 0], q)
            T.clear(out)
            for j in range(T.ceildiv(L, block_N)):
                T.copy(Kt[j * block_N, 0], k)
                T.copy(V[j * block_N, 0], v)
                T.gemm(q, k, scores, transpose_B=True, clear_accum=True, policy=T.GemmWarpPolicy.FullCol)
                T.copy(scores, p)
                T.gemm(p, v, out, policy=T.GemmWarpPolicy.FullRow)
            T.copy(out, O[bx * block_M, 0])
    return main

# T.gemm shapes the tensor cores cannot take (16 x 8 accumulator tiles over the warps, K in
# 32-byte steps): a loop every thread runs over the accumulator elements it holds
# (src/gpu/simt_gemm.c). NSA's backward pass with one query head per group has both kinds: a
# 64 x 1 accumulator, and a gemm whose K is 1 with A computed in registers.
import tilelang.language as T

M = T.const("M")
N = T.const("N")
K = T.const("K")
threads = 32
trans_A = False
trans_B = False
clear = False


# the accumulator seeded before the gemm (or cleared by it), scaled after it
@T.prim_func
def small_gemm(A: T.Tensor((K, M) if trans_A else (M, K), "float16"), B: T.Tensor((N, K) if trans_B else (K, N), "float16"),
               C: T.Tensor((M, N), "float32")):
    with T.Kernel(1, threads=threads) as bx:
        A_s = T.alloc_shared((K, M) if trans_A else (M, K), "float16")
        B_s = T.alloc_shared((N, K) if trans_B else (K, N), "float16")
        acc = T.alloc_fragment((M, N), "float32")
        T.copy(A, A_s)
        T.copy(B, B_s)
        for i, j in T.Parallel(M, N):
            acc[i, j] = 1.0
        T.gemm(A_s, B_s, acc, transpose_A=trans_A, transpose_B=trans_B, clear_accum=clear)
        for i, j in T.Parallel(M, N):
            acc[i, j] = acc[i, j] * 2.0
        T.copy(acc, C)


G = 1


# scores of G heads (a 64 x G accumulator), scaled in registers, then the A operand of a gemm
# whose K is G
@T.prim_func
def grouped_scores(Kt: T.Tensor((64, 32), "float16"), Q: T.Tensor((G, 32), "float16"), V: T.Tensor((G, 32), "float16"),
                   O: T.Tensor((64, 32), "float32")):
    with T.Kernel(1, threads=threads) as bx:
        K_s = T.alloc_shared((64, 32), "float16")
        Q_s = T.alloc_shared((G, 32), "float16")
        V_s = T.alloc_shared((G, 32), "float16")
        s = T.alloc_fragment((64, G), "float32")
        p = T.alloc_fragment((64, G), "float16")
        o = T.alloc_fragment((64, 32), "float32")
        T.copy(Kt, K_s)
        T.copy(Q, Q_s)
        T.copy(V, V_s)
        T.clear(s)
        T.gemm(K_s, Q_s, s, transpose_B=True, policy=T.GemmWarpPolicy.FullRow)
        for i, j in T.Parallel(64, G):
            p[i, j] = T.exp2(s[i, j] * 0.125)
        T.clear(o)
        T.gemm(p, V_s, o, policy=T.GemmWarpPolicy.FullRow)
        T.copy(o, O)

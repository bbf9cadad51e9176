# A T.gemm whose B operand is a fragment computed in registers (kda's backward pass gates K
# elementwise before the gemm). The matrix instructions read B from shared memory, so the GPU
# lowering copies the fragment into a shared tile first (src/gpu/stage_operands.c); C must equal
# A @ (B * g) with the gate g applied per column, and with transpose_B the same with B stored N x K.
import tilelang
import tilelang.language as T


@tilelang.jit
def gated_gemm(M=128, N=64, K=128, block_M=64, block_N=64, block_K=32, trans_B=False, threads=128):
    B_shape = (N, K) if trans_B else (K, N)
    b_tile = (block_N, block_K) if trans_B else (block_K, block_N)

    @T.prim_func
    def main(A: T.Tensor((M, K), T.float16), B: T.Tensor(B_shape, T.float16), G: T.Tensor((N,), T.float32),
             C: T.Tensor((M, N), T.float32)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            a = T.alloc_shared((block_M, block_K), T.float16)
            b = T.alloc_shared(b_tile, T.float16)
            g = T.alloc_shared((block_N,), T.float32)
            bg = T.alloc_fragment(b_tile, T.float16)
            acc = T.alloc_fragment((block_M, block_N), T.float32)
            T.copy(G[bx * block_N], g)
            T.clear(acc)
            for k in range(T.ceildiv(K, block_K)):
                T.copy(A[by * block_M, k * block_K], a)
                if trans_B:
                    T.copy(B[bx * block_N, k * block_K], b)
                    for i, j in T.Parallel(block_N, block_K):
                        bg[i, j] = b[i, j] * g[i]
                else:
                    T.copy(B[k * block_K, bx * block_N], b)
                    for i, j in T.Parallel(block_K, block_N):
                        bg[i, j] = b[i, j] * g[j]
                T.gemm(a, bg, acc, transpose_B=trans_B)
            T.copy(acc, C[by * block_M, bx * block_N])
    return main

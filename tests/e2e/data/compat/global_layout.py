# Global tensors whose elements a T.Layout places (T.annotate_layout on a kernel parameter), the
# way TileLang's flash-attention backward keeps dQ: logical dQ[b, l, d] lives where the layout
# says, not row-major. Every access goes through the layout: atomic adds from a gemm's
# accumulator, element stores, tile copies into shared tiles and fragments (which then take no
# vector, cp.async or TMA path), a T.Pipelined loop over a laid-out gemm operand, and a
# transposed 2-D layout written by a fragment copy. The verification compares the tensors'
# storage, so a target that ignored the layout would fail.
import tilelang
import tilelang.language as T


def dq_layout(dQ):
    # the mma accumulator's order over 8 x 8 blocks (TileLang's make_dq_layout, without heads)
    return T.Layout(dQ.shape, lambda b, l, d: [b, l // 8, d // 8, (d % 2), 4 * (l % 8) + (d % 8) // 2])


@tilelang.jit
def accumulate(B=2, L=128, D=64, block=32, threads=128):
    @T.prim_func
    def main(X: T.Tensor((B, L, D), T.float16), W: T.Tensor((D, D), T.float16), dQ: T.Tensor((B, L, D), T.float32),
             E: T.Tensor((B, L, D), T.float32)):
        with T.Kernel(T.ceildiv(L, block), B, threads=threads) as (bx, by):
            x = T.alloc_shared((block, D), T.float16)
            w = T.alloc_shared((D, D), T.float16)
            acc = T.alloc_fragment((block, D), T.float32)
            T.annotate_layout({dQ: dq_layout(dQ), E: dq_layout(E)})
            T.copy(X[by, bx * block:(bx + 1) * block, :], x)
            T.copy(W, w)
            T.clear(acc)
            T.gemm(x, w, acc)
            for i, j in T.Parallel(block, D):
                T.atomic_add(dQ[by, bx * block + i, j], acc[i, j])
            for i, j in T.Parallel(block, D):
                E[by, bx * block + i, j] = T.cast(x[i, j], T.float32) * 2.0
    return main


@tilelang.jit
def unpermute(B=2, L=128, D=64, block=32, threads=128):
    @T.prim_func
    def main(dQ: T.Tensor((B, L, D), T.float32), Y: T.Tensor((B, L, D), T.float32), Z: T.Tensor((B, L, D), T.float32)):
        with T.Kernel(T.ceildiv(L, block), B, threads=threads) as (bx, by):
            s = T.alloc_shared((block, D), T.float32)
            f = T.alloc_fragment((block, D), T.float32)
            T.annotate_layout({dQ: dq_layout(dQ)})
            T.copy(dQ[by, bx * block:(bx + 1) * block, :], s)
            T.copy(s, Y[by, bx * block:(bx + 1) * block, :])
            T.copy(dQ[by, bx * block:(bx + 1) * block, :], f)
            for i, j in T.Parallel(block, D):
                f[i, j] = f[i, j] + 1.0
            T.copy(f, Z[by, bx * block:(bx + 1) * block, :])
    return main


@tilelang.jit
def pipelined_operand(M=256, N=128, K=256, block_M=64, block_N=64, block_K=64, stages=3, threads=128):
    @T.prim_func
    def main(A: T.Tensor((M, K), T.float16), Bm: T.Tensor((K, N), T.float16), C: T.Tensor((M, N), T.float32)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            a = T.alloc_shared((block_M, block_K), T.float16)
            b = T.alloc_shared((block_K, block_N), T.float16)
            c = T.alloc_fragment((block_M, block_N), T.float32)
            T.annotate_layout({A: T.Layout(A.shape, lambda i, k: [k // 8, i, k % 8]),
                               C: T.Layout(C.shape, lambda i, j: [j, i])})
            T.clear(c)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=stages):
                T.copy(A[by * block_M, k * block_K], a)
                T.copy(Bm[k * block_K, bx * block_N], b)
                T.gemm(a, b, c)
            T.copy(c, C[by * block_M, bx * block_N])
    return main

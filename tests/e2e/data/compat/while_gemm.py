# `while` loops on runtime conditions around tile operations, as TileLang's stream-K GEMM and
# AMD attention kernels write them (docs/gpu.md, barriers: a while loop whose condition every
# thread evaluates alike).
#   streamed_gemm: each block walks the output tiles from its index in steps of the grid, a
#                  T.alloc_var cursor as the condition, a pipelined k loop and a gemm inside
#   shared_cursor: the cursor lives in shared memory and the body advances it, so the
#                  condition reads what the body wrote: a barrier goes before each evaluation
import tilelang
import tilelang.language as T


@tilelang.jit
def streamed_gemm(M=192, N=128, K=96, block_M=64, block_N=64, block_K=32, blocks=4, num_stages=2, threads=128):
    tiles_n = T.ceildiv(N, block_N)
    tiles = T.ceildiv(M, block_M) * tiles_n

    @T.prim_func
    def main(A: T.Tensor((M, K), T.float16), B: T.Tensor((K, N), T.float16), C: T.Tensor((M, N), T.float32)):
        with T.Kernel(blocks, threads=threads) as bx:
            a = T.alloc_shared((block_M, block_K), T.float16)
            b = T.alloc_shared((block_K, block_N), T.float16)
            acc = T.alloc_fragment((block_M, block_N), T.float32)
            tile = T.alloc_var(T.int32)
            tile = bx
            while tile < tiles:
                tm = tile // tiles_n
                tn = tile % tiles_n
                T.clear(acc)
                for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                    T.copy(A[tm * block_M, k * block_K], a)
                    T.copy(B[k * block_K, tn * block_N], b)
                    T.gemm(a, b, acc)
                T.copy(acc, C[tm * block_M, tn * block_N])
                tile = tile + blocks
    return main


@tilelang.jit
def shared_cursor(M=40, N=64, blocks=3, threads=64):

    @T.prim_func
    def main(A: T.Tensor((M, N), T.float32), B: T.Tensor((M, N), T.float32)):
        with T.Kernel(blocks, threads=threads) as bx:
            row = T.alloc_shared((1,), T.int32)
            s = T.alloc_shared((N,), T.float32)
            for i in T.Parallel(1):
                row[i] = bx
            while row[0] < M:
                T.copy(A[row[0], 0], s)
                for j in T.Parallel(N):
                    s[j] = s[j] * 2 + row[0]
                T.copy(s, B[row[0], 0])
                for i in T.Parallel(1):
                    row[i] = row[i] + blocks
    return main

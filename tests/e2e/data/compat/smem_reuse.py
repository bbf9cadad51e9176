# Shared tiles whose lifetimes do not overlap share memory when one after another they do not fit
# (flash attention's backward passes: dK and dV staged through shared memory after the mainloop).
# Here a pipelined gemm's A and B stages are dead once the loop ends, and the epilogue's float32
# tile `c` takes their memory: every thread must be done reading the stages before any writes
# `c`, so a barrier goes between them. The epilogue reads `c` across threads (columns reversed)
# and reduces its rows, so a tile placed over live data, or a missing barrier, shows in C or R.
# Default sizes need the reuse on metal (32 KiB); on cuda take the commented sizes.
#   metal:        (defaults)                         44 KiB one after another
#   cuda sm_80:   -D block_M=128 -D block_N=128 -D block_K=64 -D stages=4 -D threads=256   (192 KiB)
import tilelang
import tilelang.language as T


@tilelang.jit
def gemm_then_tile(M=128, N=192, K=256, block_M=64, block_N=96, block_K=32, stages=2, threads=128):
    @T.prim_func
    def main(A: T.Tensor((M, K), T.float16), B: T.Tensor((K, N), T.float16), C: T.Tensor((M, N), T.float32),
             R: T.Tensor((M, T.ceildiv(N, block_N)), T.float32)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            a = T.alloc_shared((block_M, block_K), T.float16)
            b = T.alloc_shared((block_K, block_N), T.float16)
            acc = T.alloc_fragment((block_M, block_N), T.float32)
            c = T.alloc_shared((block_M, block_N), T.float32)
            row = T.alloc_fragment((block_M,), T.float32)
            T.clear(acc)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=stages):
                T.copy(A[by * block_M, k * block_K], a)
                T.copy(B[k * block_K, bx * block_N], b)
                T.gemm(a, b, acc)
            T.copy(acc, c)
            for i, j in T.Parallel(block_M, block_N):
                acc[i, j] = c[i, block_N - 1 - j] * 0.5
            T.reduce_sum(acc, row, dim=1)
            T.copy(acc, C[by * block_M, bx * block_N])
            for i in T.Parallel(block_M):
                R[by * block_M + i, bx] = row[i]
    return main


# Two phases, each through its own shared tile, with no barrier of the program's between them:
# `y` takes `x`'s memory, and the barrier tilec adds before `y`'s first write keeps a thread
# from overwriting rows of `x` another thread has not yet read (both are read across threads).
#   metal:      (defaults)  48 KiB one after another
#   cuda sm_80: -D rows=128 -D cols=192 -D threads=256   (192 KiB)
@tilelang.jit
def two_phases(rows=64, cols=96, threads=128):
    @T.prim_func
    def main(X: T.Tensor((rows, cols), T.float32), Y: T.Tensor((rows, cols), T.float32), P: T.Tensor((rows, cols), T.float32),
             Q: T.Tensor((rows, cols), T.float32)):
        with T.Kernel(1, threads=threads):
            x = T.alloc_shared((rows, cols), T.float32)
            y = T.alloc_shared((rows, cols), T.float32)
            T.copy(X, x)
            for i, j in T.Parallel(rows, cols):
                P[i, j] = x[rows - 1 - i, cols - 1 - j] + 1.0
            T.copy(Y, y)
            for i, j in T.Parallel(rows, cols):
                Q[i, j] = y[rows - 1 - i, j] * 2.0
    return main

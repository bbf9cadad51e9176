# Fragments a T.Parallel loop uses at elements its threads do not hold in registers: the GPU
# lowering keeps them in shared memory instead, where every thread reaches every element, and
# lowers again (src/gpu/lower.c, "Attempts"). As TileLang kernels write them:
#   neighbour_rows:      each row minus the next row's sum (mamba's chunk scan reads a row vector
#                        at another row's index)
#   column_accumulator:  a 1-D accumulator added to from a (1, N) loop, row after row (layernorm's
#                        backward pass accumulates dgamma so)
#   accumulator_rows:    a gemm's accumulator, which stays in registers, read in row blocks by a
#                        loop of another shape (sparse MLA's backward pass stores dKV so): that
#                        loop reads a shared copy made just before it
import tilelang
import tilelang.language as T


@tilelang.jit
def neighbour_rows(M=64, N=64, threads=128):

    @T.prim_func
    def main(X: T.Tensor((M, N), T.float32), Out: T.Tensor((M, N), T.float32)):
        with T.Kernel(1, threads=threads) as bx:
            x = T.alloc_fragment((M, N), T.float32)
            s = T.alloc_fragment((M,), T.float32)
            T.copy(X, x)
            T.reduce_sum(x, s, dim=1)
            for i, j in T.Parallel(M, N):
                x[i, j] = x[i, j] - s[(i + 1) % M]
            T.copy(x, Out)
    return main


@tilelang.jit
def column_accumulator(M=16, N=256, threads=128):

    @T.prim_func
    def main(X: T.Tensor((M, N), T.float32), Y: T.Tensor((M, N), T.float32), Out: T.Tensor((N,), T.float32)):
        with T.Kernel(1, threads=threads) as bx:
            x_s = T.alloc_shared((1, N), T.float32)
            row = T.alloc_fragment((1, N), T.float32)
            acc = T.alloc_fragment((N,), T.float32)
            T.clear(acc)
            for r in T.serial(M):
                T.copy(X[r, 0], x_s)
                for i, j in T.Parallel(1, N):
                    row[i, j] = x_s[i, j] * Y[r, j]
                    acc[j] += row[i, j]
            T.copy(acc, Out)
    return main


@tilelang.jit
def accumulator_rows(M=64, N=64, K=32, parts=4, threads=128):
    rows = M // parts

    @T.prim_func
    def main(A: T.Tensor((M, K), T.float16), B: T.Tensor((K, N), T.float16), C: T.Tensor((M, N), T.float32)):
        with T.Kernel(1, threads=threads) as bx:
            a = T.alloc_shared((M, K), T.float16)
            b = T.alloc_shared((K, N), T.float16)
            acc = T.alloc_fragment((M, N), T.float32)
            out = T.alloc_shared((rows, N), T.float32)
            T.copy(A, a)
            T.copy(B, b)
            T.gemm(a, b, acc, clear_accum=True)
            for p in T.serial(parts):
                for i, j in T.Parallel(rows, N):
                    out[i, j] = acc[i + p * rows, j] * 2
                T.copy(out, C[p * rows, 0])
    return main

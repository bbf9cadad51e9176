# Fragments a T.Parallel loop uses at elements its threads do not hold in registers: the GPU
# lowering keeps them in shared memory instead, where every thread reaches every element, and
# lowers again (src/gpu/lower.c, "Attempts"). As TileLang kernels write them:
#   neighbour_rows:      each row minus the next row's sum (mamba's chunk scan reads a row vector
#                        at another row's index)
#   column_accumulator:  a 1-D accumulator added to from a (1, N) loop, row after row (layernorm's
#                        backward pass accumulates dgamma so)
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

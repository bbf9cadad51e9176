# Per-thread cells allocated inside a T.Parallel body (the DSA indexer's backward pass keeps
# its ReLU derivative in a T.alloc_var there): every iteration has its own cell, so the GPU
# lowering gives each copy of the body (one per register a thread runs) a cell of its own.
#   relu_grad: D = G * (X > 0), through a T.alloc_var cell and a 2-element T.alloc_local
import tilelang
import tilelang.language as T


@tilelang.jit
def relu_grad(M=64, N=64, threads=128):

    @T.prim_func
    def main(X: T.Tensor((M, N), T.float32), G: T.Tensor((M, N), T.float32), D: T.Tensor((M, N), T.float32),
             E: T.Tensor((M, N), T.float32)):
        with T.Kernel(1, threads=threads) as bx:
            d = T.alloc_fragment((M, N), T.float32)
            for i, j in T.Parallel(M, N):
                slope = T.alloc_var(T.float32)
                if X[i, j] > 0:
                    slope = 1.0
                else:
                    slope = 0.0
                pair = T.alloc_local((2,), T.float32)
                pair[0] = G[i, j]
                pair[1] = X[i, j]
                d[i, j] = pair[0] * slope
                E[i, j] = pair[1] * slope + pair[0]
            T.copy(d, D)
    return main

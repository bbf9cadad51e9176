# Views of global tensors (T.Tensor(shape, dtype, X.data)), as TileLang's convolution flattens
# its kernel and output: the view indexes its tensor's elements row-major with its own shape.
# A gemm reads its A tiles through a 2-D view of a 4-D input (tile copies: vectorized, cp.async,
# not TMA, which takes kernel parameters only) and its result goes out through a 2-D view of a
# 3-D output (Y) and, element by element, a 1-D view of a 4-D one (Z); --verify compares both
# with the cpu reference.
import tilelang
import tilelang.language as T


@tilelang.jit
def flat_gemm(N=2, H=8, W=8, C=64, F=64, block_M=64, block_N=64, block_K=32, threads=128):
    M = N * H * W

    @T.prim_func
    def main(X: T.Tensor((N, H, W, C), T.float16), Wt: T.Tensor((C, F), T.float16), Y: T.Tensor((N, H * W, F), T.float32),
             Z: T.Tensor((N, H, W, F), T.float32)):
        with T.Kernel(T.ceildiv(F, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            x_flat = T.Tensor((M, C), T.float16, X.data)
            y_flat = T.Tensor((M, F), T.float32, Y.data)
            z_line = T.Tensor((M * F,), T.float32, Z.data)
            a = T.alloc_shared((block_M, block_K), T.float16)
            b = T.alloc_shared((block_K, block_N), T.float16)
            acc = T.alloc_fragment((block_M, block_N), T.float32)
            T.clear(acc)
            for k in T.Pipelined(T.ceildiv(C, block_K), num_stages=2):
                T.copy(x_flat[by * block_M, k * block_K], a)
                T.copy(Wt[k * block_K, bx * block_N], b)
                T.gemm(a, b, acc)
            T.copy(acc, y_flat[by * block_M, bx * block_N])
            for i, j in T.Parallel(block_M, block_N):
                z_line[(by * block_M + i) * F + bx * block_N + j] = acc[i, j] * 2.0
    return main

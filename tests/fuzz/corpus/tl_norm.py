"""RMS norm over rows in the style of TileLang's examples/norm, with a ragged last tile masked by a
selection between a literal and a loaded value."""
import tilelang
import tilelang.language as T


def rms_norm(M=100, N=256, blk_m=16, eps=1e-5):
    dtype = "float"

    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, blk_m), threads=128) as bx:
            A_local = T.alloc_fragment((blk_m, N), dtype)
            A_pow = T.alloc_fragment((blk_m, N), dtype)
            A_sum = T.alloc_fragment((blk_m,), dtype)
            for i, j in T.Parallel(blk_m, N):
                A_local[i, j] = T.if_then_else(bx * blk_m + i < M, A[bx * blk_m + i, j], 0)
            for i, j in T.Parallel(blk_m, N):
                A_pow[i, j] = A_local[i, j] * A_local[i, j]
            T.reduce_sum(A_pow, A_sum, dim=1)
            for i in T.Parallel(blk_m):
                A_sum[i] = T.rsqrt(A_sum[i] / N + eps)
            for i, j in T.Parallel(blk_m, N):
                if bx * blk_m + i < M:
                    B[bx * blk_m + i, j] = A_local[i, j] * A_sum[i]

    return main


if __name__ == "__main__":
    M, N = 8192, 8192
    kernel = tilelang.compile(rms_norm(M, N), out_idx=[-1])

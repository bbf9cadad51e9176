# A @tilelang.jit factory whose prim_func is defined by a nested helper (blocksparse_attention,
# seer_attention), with the register hints T.set_max_nreg / T.inc_max_nreg / T.dec_max_nreg and
# T.Parallel's prefer_async / annotations (scheduling hints: the result is the same).
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[1])
def scale_rows(M, N):
    def kernel_func(block_M, threads):
        @T.prim_func
        def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32")):
            with T.Kernel(T.ceildiv(M, block_M), threads=threads) as bx:
                T.set_max_nreg(240, 1)
                T.inc_max_nreg(232)
                T.dec_max_nreg(40)
                for i, j in T.Parallel(block_M, N, prefer_async=True, annotations={"parallel_async_without_async_commit_wait": True}):
                    B[bx * block_M + i, j] = A[bx * block_M + i, j] * 2.0 + 1.0

        return main

    return kernel_func(16, 128)


def tune_driver(M, N):
    """Not a kernel (no @tilelang.jit): an autotuning driver whose helper defines a prim_func."""

    def kernel(block_M):
        @T.prim_func
        def main(A: T.Tensor((M, N), "float32")):
            with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
                for i, j in T.Parallel(block_M, N):
                    A[bx * block_M + i, j] = 0.0

        return main

    return kernel

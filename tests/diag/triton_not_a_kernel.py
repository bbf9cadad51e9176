# A Triton kernel beside a TileLang one (TileLang's examples compare against Triton): only the
# TileLang kernel counts, so no --kernel is needed.
import tilelang
import tilelang.language as T
import triton
import triton.language as tl


@triton.jit
def triton_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


@tilelang.jit
def copy(M=64, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((M,), dtype), B: T.Tensor((M,), dtype)):
        with T.Kernel(1, threads=64) as bx:
            for i in T.Parallel(M):
                B[i] = A[i]
    return main


@triton.jit
def kernel_with_a_typo(x_ptr):
    tl.store(x_ptr, undefined_name)

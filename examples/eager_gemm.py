"""GEMM in TileLang's eager style: the decorated function takes the tensors themselves.

M, N and K are declared with T.const: TileLang reads them from the shapes of A and B at call
time and specialises the kernel for them; the output C is declared with T.empty and returned.
The remaining arguments (block sizes, dtypes) are compile-time parameters with defaults.
"""
import tilelang
import tilelang.language as T


@tilelang.jit
def matmul(A, B, block_M=128, block_N=128, block_K=32, num_stages=3, threads=128,
           dtype=T.float16, accum_dtype=T.float32, out_dtype=T.float16):
    M, N, K = T.const("M, N, K")

    A: T.Tensor((M, K), dtype)
    B: T.Tensor((K, N), dtype)
    C = T.empty((M, N), out_dtype)

    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
        A_shared = T.alloc_shared((block_M, block_K), dtype)
        B_shared = T.alloc_shared((block_K, block_N), dtype)
        C_local = T.alloc_fragment((block_M, block_N), accum_dtype)

        T.clear(C_local)
        for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
            T.copy(A[by * block_M, k * block_K], A_shared)
            T.copy(B[k * block_K, bx * block_N], B_shared)
            T.gemm(A_shared, B_shared, C_local)

        T.copy(C_local, C[by * block_M, bx * block_N])

    return C


def main():
    import torch

    a = torch.randn(1024, 512, device="cuda", dtype=torch.float16)
    b = torch.randn(512, 768, device="cuda", dtype=torch.float16)
    c = matmul(a, b)  # M, N, K = 1024, 768, 512 are taken from the tensors
    torch.testing.assert_close(c, (a.float() @ b.float()).half(), rtol=1e-2, atol=1e-2)

    kernel = matmul.compile(M=256, N=256, K=256, block_M=64, block_N=64)
    print(kernel.get_kernel_source())


if __name__ == "__main__":
    main()

"""Split-K GEMM: C += A @ B where the K axis is cut into split_k slices, one per grid z index,
and each block adds its partial product into C with a tile-wide T.atomic_add.

C is an in/out parameter: the caller zeroes it (or passes a tensor to accumulate into). The
partial products are float32 and C is float32, so the atomics add in float32. The default
M = 200 is NOT a multiple of block_M = 64; K = 512 splits into 4 slices of 128.
"""
import tilelang
import tilelang.language as T


@tilelang.jit
def matmul_splitk(M=200, N=256, K=512, block_M=64, block_N=64, block_K=32, split_k=4, threads=128,
                  dtype=T.float16, accum_dtype=T.float32, out_dtype=T.float32):
    assert K % split_k == 0, "K must divide evenly into split_k slices"
    split_size = K // split_k

    @T.prim_func
    def main(
        A: T.Tensor((M, K), dtype),
        B: T.Tensor((K, N), dtype),
        C: T.Tensor((M, N), out_dtype),
    ):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), split_k, threads=threads) as (bx, by, bz):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)

            T.clear(C_local)
            for ko in T.Pipelined(T.ceildiv(split_size, block_K), num_stages=2):
                T.copy(A[by * block_M, bz * split_size + ko * block_K], A_shared)
                T.copy(B[bz * split_size + ko * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)

            T.atomic_add(C[by * block_M, bx * block_N], C_local)

    return main


if __name__ == "__main__":
    import torch

    M, N, K = 1024, 1024, 8192
    kernel = matmul_splitk(M, N, K, block_M=128, block_N=128, split_k=8)
    a = torch.randn(M, K, device="cuda", dtype=torch.float16)
    b = torch.randn(K, N, device="cuda", dtype=torch.float16)
    c = torch.zeros(M, N, device="cuda", dtype=torch.float32)
    kernel(a, b, c)
    torch.testing.assert_close(c, a.float() @ b.float(), rtol=1e-2, atol=1e-2)
    print("split-K gemm: all checks pass")

# TileLang's explicit asynchronous Hopper forms: T.wgmma_gemm (a gemm issued without a wait),
# T.wait_wgmma, T.ptx_commit_group / T.ptx_wait_group around prefer_async copies, and the
# T.tfloat32 dtype (float32 storage). Every wait a correct program needs has been reached when
# it reads a result, so they compute what T.gemm and plain copies compute: C from the async
# forms must equal Ref from the synchronous ones, bit for bit.
import tilelang
import tilelang.language as T

M, N, K = 32, 32, 64


@T.prim_func
def async_gemm(A: T.Tensor((M, K), "float16"), B: T.Tensor((N, K), "float16"), X: T.Tensor((M, N), T.tfloat32),
               C: T.Tensor((M, N), "float32"), Ref: T.Tensor((M, N), "float32"), Y: T.Tensor((M, N), "float32")):
    with T.Kernel(1, threads=128) as bx:
        A_s = T.alloc_shared((M, K), "float16")
        B_s = T.alloc_shared((N, K), "float16")
        acc = T.alloc_fragment((M, N), "float32")
        ref = T.alloc_fragment((M, N), "float32")
        t = T.alloc_fragment((M, N), dtype=T.tfloat32)
        for i, j in T.Parallel(M, K, prefer_async=True):
            A_s[i, j] = A[i, j]
        for i, j in T.Parallel(N, K, prefer_async=True):
            B_s[i, j] = B[i, j]
        T.ptx_commit_group()
        T.ptx_wait_group(0)
        T.clear(acc)
        T.wgmma_gemm(A_s[:, 0 : K // 2], B_s[:, 0 : K // 2], acc, transpose_B=True)
        T.wgmma_gemm(A_s[:, K // 2 : K], B_s[:, K // 2 : K], acc, transpose_B=True)
        T.wait_wgmma(0)
        T.copy(acc, C)
        T.gemm(A_s[:, 0 : K // 2], B_s[:, 0 : K // 2], ref, transpose_B=True, clear_accum=True)
        T.gemm(A_s[:, K // 2 : K], B_s[:, K // 2 : K], ref, transpose_B=True)
        T.copy(ref, Ref)
        T.copy(X, t)
        for i, j in T.Parallel(M, N):
            Y[i, j] = t[i, j] * 2

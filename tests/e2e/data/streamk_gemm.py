# GEMMs for stream-K (the cuda target option streamk=on, docs/cuda.md "Stream-K"): a tile cut
# along k runs the code before its loop once per piece, so what comes before the loop decides
# whether the cut is allowed.
#   bias_gemm: the bias staged in shared memory before the loop, added after it: the staging
#     may run again, so the tiles are cut;
#   seeded_gemm: the accumulator starts from the bias instead of zero: the two pieces of a cut
#     tile would each add it, so the tiles are walked whole (and --explain says why).
import tilelang
import tilelang.language as T


@tilelang.jit
def bias_gemm(M=256, N=768, K=512, block_M=128, block_N=256, block_K=64, num_stages=4, threads=256):
    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), bias: T.Tensor((N,), "float16"),
             C: T.Tensor((M, N), "float16")):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_s = T.alloc_shared((block_M, block_K), "float16")
            B_s = T.alloc_shared((block_K, block_N), "float16")
            bias_s = T.alloc_shared((block_N,), "float16")
            acc = T.alloc_fragment((block_M, block_N), "float32")
            T.copy(bias[bx * block_N], bias_s)
            T.clear(acc)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                T.copy(A[by * block_M, k * block_K], A_s)
                T.copy(B[k * block_K, bx * block_N], B_s)
                T.gemm(A_s, B_s, acc)
            for i, j in T.Parallel(block_M, block_N):
                acc[i, j] += bias_s[j]
            T.copy(acc, C[by * block_M, bx * block_N])

    return main


@tilelang.jit
def seeded_gemm(M=256, N=768, K=512, block_M=128, block_N=256, block_K=64, num_stages=4, threads=256):
    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), bias: T.Tensor((N,), "float16"),
             C: T.Tensor((M, N), "float16")):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_s = T.alloc_shared((block_M, block_K), "float16")
            B_s = T.alloc_shared((block_K, block_N), "float16")
            acc = T.alloc_fragment((block_M, block_N), "float32")
            for i, j in T.Parallel(block_M, block_N):
                acc[i, j] = bias[bx * block_N + j]
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                T.copy(A[by * block_M, k * block_K], A_s)
                T.copy(B[k * block_K, bx * block_N], B_s)
                T.gemm(A_s, B_s, acc)
            T.copy(acc, C[by * block_M, bx * block_N])

    return main

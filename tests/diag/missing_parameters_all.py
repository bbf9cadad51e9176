# tilec: ir -D N=4
import tilelang
import tilelang.language as T

def matmul(M: int, N, K: int, block_M=128, dtype="float16"):
    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
            T.clear(C[0:M, 0:N])
    return main

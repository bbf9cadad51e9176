# A runtime value bound in one 'with T.Kernel(...)' block is not defined in the next one.
import tilelang
import tilelang.language as T


@T.prim_func
def two_blocks(A: T.Tensor((8,), "float32"), B: T.Tensor((8,), "float32")):
    with T.Kernel(8, threads=32) as b:
        row = (b + 1) % 8
        B[row] = A[row]
    with T.Kernel(8, threads=32) as b:
        B[b] = B[b] + A[row]

# Importing a name the sibling module does not define is an error at the import.
import tilelang.language as T

from sibling_helpers import shifted, not_there


@T.prim_func
def main(A: T.Tensor((8,), "float32")):
    with T.Kernel(1, threads=32) as bx:
        for i in T.Parallel(8):
            A[i] = shifted(A[i])

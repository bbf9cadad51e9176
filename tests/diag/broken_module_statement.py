import tilelang.language as T

BLOCK = = 64
WIDTH = 1024
not valid python at all = 3


@T.prim_func
def scale(A: T.Tensor((WIDTH,), "float32")):
    with T.Kernel(WIDTH // BLOCK, threads=128) as bx:
        for i in T.Parallel(BLOCK):
            A[bx * BLOCK + i] = A[bx * BLOCK + i] * 2

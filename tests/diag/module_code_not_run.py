import tilelang
import tilelang.language as T


import sys

if len(sys.argv) > 1:
    BLOCK = 128
else:
    BLOCK = 64


@T.prim_func
def main(A: T.Tensor((1024,), T.float32)):
    with T.Kernel(1024 // BLOCK, threads=128) as bx:
        T.clear(A[bx * BLOCK:(bx + 1) * BLOCK])

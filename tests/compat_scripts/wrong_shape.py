# A kernel called with a tensor of the wrong size: tilec's error, told at the calling line.
import numpy as np
import tilelang
import tilelang.language as T

@tilelang.jit(out_idx=[-1])
def add(N):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            for i in T.Parallel(N):
                B[i] = A[i]
    return main

k = add(64)
k(np.zeros(32, np.float32))
print("wrong_shape: not reached")

# A kernel that reads a value tilec cannot take (a numpy array): one message naming the variable
# and the line that reads it.
import numpy as np
import tilelang
import tilelang.language as T

weights = np.arange(4, dtype=np.float32)


@tilelang.jit(out_idx=[-1])
def scale(N, dtype="float32"):

    @T.prim_func
    def main(A: T.Tensor((N,), dtype), B: T.Tensor((N,), dtype)):
        with T.Kernel(1, threads=128) as bx:
            for i in T.Parallel(N):
                B[i] = A[i] * weights[i % 4]

    return main


scale(64)
print("bad_capture: not reached")

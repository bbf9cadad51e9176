# Uses an API tilec does not provide (JITKernel.export_library): the run must stop at that line
# with one message naming it, exit status 1, no traceback.
import numpy as np
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def copy(N, dtype="float32"):

    @T.prim_func
    def main(A: T.Tensor((N,), dtype), B: T.Tensor((N,), dtype)):
        with T.Kernel(1, threads=128) as bx:
            for i in T.Parallel(N):
                B[i] = A[i]

    return main


kernel = copy(256)
b = kernel(np.ones(256, np.float32))
kernel.export_library("copy.so")
print("unsupported_api: not reached")

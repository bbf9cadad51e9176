# tilec: run --target cpu --verify --timeout=0.5
# The same loop on the cpu backend: its native code cannot be interrupted, so --timeout ends the
# command, naming the runtime `while` the kernel has.
import tilelang
import tilelang.language as T


@tilelang.jit
def spin(N=32):
    @T.prim_func
    def main(A: T.Tensor((N,), "int32"), B: T.Tensor((N,), "int32")):
        with T.Kernel(1, threads=N) as bx:
            n = T.alloc_var("int32")
            n = 0
            while A[0] < 1000:
                n = n + 1
            B[0] = n

    return main

# An 'if' on the thread index whose branches hold tile operations (TileLang's warp-specialized
# branches; deepseek_mhc's `if T.get_thread_binding() < 32:`): the first 32 threads compute the
# row sums of A into S, the others scale A into B. SRef and BRef compute the same with no 'if'.
import tilelang
import tilelang.language as T


@tilelang.jit
def branches(M, N):

    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), S: T.Tensor((M,), "float32"), B: T.Tensor((M, N), "float32"),
             SRef: T.Tensor((M,), "float32"), BRef: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=96) as bx:
            a = T.alloc_shared((M, N), "float32")
            T.copy(A, a)
            if T.get_thread_binding() < 32:
                f = T.alloc_fragment((M, N), "float32")
                s = T.alloc_fragment((M,), "float32")
                T.copy(a, f)
                T.reduce_sum(f, s, dim=1)
                for i in T.Parallel(M):
                    S[i] = s[i] + bx
            else:
                for i, j in T.Parallel(M, N):
                    B[i, j] = a[i, j] * 3.0
            g = T.alloc_fragment((M, N), "float32")
            r = T.alloc_fragment((M,), "float32")
            T.copy(a, g)
            T.reduce_sum(g, r, dim=1)
            for i in T.Parallel(M):
                SRef[i] = r[i] + bx
            for i, j in T.Parallel(M, N):
                BRef[i, j] = a[i, j] * 3.0

    return main

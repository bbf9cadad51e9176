# T.fill(buf[i], v) on a single element (deepseek_v32/topk_selector.py): TileLang fills that one
# element (the region of a BufferLoad has extent 1 in every dimension).
import tilelang
import tilelang.language as T


@tilelang.jit
def count(N):
    @T.prim_func
    def main(A: T.Tensor((N,), "int32"), B: T.Tensor((2,), "int32")):
        with T.Kernel(1, threads=32) as bx:
            s = T.alloc_shared((2,), "int32")
            T.fill(s[0], 0)
            T.fill(s[1], 7)
            for i in T.serial(N):
                s[0] = s[0] + A[i]
            T.copy(s, B)

    return main

# A 2-D register tile (rows x npt) written in a T.Parallel(threads, npt) nest, copied in and out
# of a 2-D tensor. `order`: 0 reg[i, j] (rows = threads), 1 reg[j, i] (a (npt, threads) tile,
# transposed), 2 reg[threads - 1 - i, npt - 1 - j] (reversed), 3 a 1-D tile read at i * npt + j
# beside the 2-D one written at [i, j].
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[1])
def tile2d(M=512, threads=128, npt=4, dtype="float16", select=1, order=0):
    @T.prim_func
    def main(x: T.Tensor((M, npt), dtype), y: T.Tensor((M, npt), dtype)):
        with T.Kernel(T.ceildiv(M, threads), threads=threads) as bx:
            if order == 1:
                x_reg = T.alloc_fragment((npt, threads), dtype)
                y_reg = T.alloc_fragment((npt, threads), dtype)
                x_s = T.alloc_shared((threads, npt), dtype)
                T.copy(x[bx * threads, 0], x_s)
                for a, b in T.Parallel(npt, threads):
                    x_reg[a, b] = x_s[b, a]
            elif order == 3:
                x_reg = T.alloc_fragment((threads * npt,), dtype)
                y_reg = T.alloc_fragment((threads, npt), dtype)
                x_s = T.alloc_shared((threads, npt), dtype)
                T.copy(x[bx * threads, 0], x_s)
                for e in T.Parallel(threads * npt):
                    x_reg[e] = x_s[e // npt, e % npt]
            else:
                x_reg = T.alloc_fragment((threads, npt), dtype)
                y_reg = T.alloc_fragment((threads, npt), dtype)
                T.copy(x[bx * threads, 0], x_reg)
            for i, j in T.Parallel(threads, npt):
                if order == 1:
                    val = x_reg[j, i]
                elif order == 2:
                    val = x_reg[threads - 1 - i, npt - 1 - j]
                elif order == 3:
                    val = x_reg[i * npt + j]
                else:
                    val = x_reg[i, j]
                if select:
                    r = T.if_then_else(val > T.cast(0, dtype), val, T.cast(0.01, dtype) * val)
                else:
                    r = val + T.cast(1, dtype)
                if order == 1:
                    y_reg[j, i] = r
                elif order == 2:
                    y_reg[threads - 1 - i, npt - 1 - j] = r
                else:
                    y_reg[i, j] = r
            if order == 1:
                y_s = T.alloc_shared((threads, npt), dtype)
                for a, b in T.Parallel(npt, threads):
                    y_s[b, a] = y_reg[a, b]
                T.copy(y_s, y[bx * threads, 0])
            else:
                T.copy(y_reg, y[bx * threads, 0])

    return main

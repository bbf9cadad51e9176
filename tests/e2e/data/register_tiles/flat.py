# A 1-D register tile written in a T.Parallel(threads, npt) nest at i * npt + j, between two
# T.copy: the elementwise pattern of operator libraries (leaky_relu, clamp, prelu). `order`
# picks the bijection: 0 i * npt + j, 1 reversed, 2 j * threads + i (transposed).
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[1])
def flat(N=1024, threads=128, npt=8, dtype="float16", select=1, order=0):
    block = threads * npt

    @T.prim_func
    def main(x: T.Tensor((N,), dtype), y: T.Tensor((N,), dtype)):
        with T.Kernel(T.ceildiv(N, block), threads=threads) as bx:
            x_reg = T.alloc_fragment((block,), dtype)
            y_reg = T.alloc_fragment((block,), dtype)
            T.copy(x[bx * block:(bx + 1) * block], x_reg)
            for i, j in T.Parallel(threads, npt):
                if order == 0:
                    e = i * npt + j
                elif order == 1:
                    e = (threads - 1 - i) * npt + (npt - 1 - j)
                else:
                    e = j * threads + i
                val = x_reg[e]
                if select:
                    y_reg[e] = T.if_then_else(val > T.cast(0, dtype), val, T.cast(0.01, dtype) * val)
                else:
                    y_reg[e] = val * T.cast(2, dtype)
            T.copy(y_reg, y[bx * block:(bx + 1) * block])

    return main

import os

import tilelang
import tilelang.language as T

from .tiling import TileConfig, align_up, scaled


def make_scaler(n, factor=2.0, dtype="float32"):
    """Y = X * factor + OFFSET over (rows, n): a plain factory holding a @tilelang.jit factory
    holding the prim_func."""
    cfg = TileConfig.for_width(n)
    block = cfg.block
    padded = align_up(n, block)
    threads = int(os.environ.get("MYLIB_THREADS", cfg.threads))

    @tilelang.jit(out_idx=[-1])
    def build(rows):

        @T.macro
        def store_scaled(Y, X, r, c):
            Y[r, c] = scaled(X[r, c], factor)

        @T.prim_func
        def scale_rows(X: T.Tensor((rows, n), dtype), Y: T.Tensor((rows, n), dtype)):
            with T.Kernel(rows, padded // block, threads=threads) as (bx, by):
                for j in T.Parallel(block):
                    store_scaled(Y, X, bx, by * block + j)

        return scale_rows

    return build


def make_row_sum(n, dtype="float32"):
    cfg = TileConfig(align_up(n, 32), 32)  # the kernel reads the object's attributes

    def inner(rows):
        @T.prim_func
        def row_sum(X: T.Tensor((rows, n), dtype), S: T.Tensor((rows,), dtype)):
            with T.Kernel(rows, threads=cfg.threads) as bx:
                x = T.alloc_fragment((cfg.block,), dtype)
                s = T.alloc_fragment((1,), dtype)
                T.clear(x)
                for j in T.Parallel(n):
                    x[j] = X[bx, j]
                T.reduce_sum(x, s, dim=0)
                S[bx] = s[0]

        return tilelang.compile(row_sum, out_idx=[1])

    return inner

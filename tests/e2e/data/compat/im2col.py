# T.im2col: the im2col matrix of an NHWC image (kernel 3, stride 2, dilation 2, padding 2),
# tile by tile into Col, and the same matrix element by element into Ref from a loop over
# (n, oh, ow, kh, kw, c); the test compares them.
import tilelang
import tilelang.language as T

N, H, W, C = 2, 6, 6, 4
KS, S, D, P = 3, 2, 2, 2
OH = (H + 2 * P - D * (KS - 1) - 1) // S + 1
OW = (W + 2 * P - D * (KS - 1) - 1) // S + 1
block_m, block_k = 6, 12
dtype = "float32"


@T.prim_func
def im2col(
    data: T.Tensor((N, H, W, C), dtype),
    Col: T.Tensor((N * OH * OW, KS * KS * C), dtype),
    Ref: T.Tensor((N * OH * OW, KS * KS * C), dtype),
):
    with T.Kernel(T.ceildiv(KS * KS * C, block_k), T.ceildiv(N * OH * OW, block_m), threads=32) as (bx, by):
        tile = T.alloc_shared((block_m, block_k), dtype)
        T.im2col(data, tile, by, bx, KS, S, D, P)
        T.copy(tile, Col[by * block_m, bx * block_k])
        if bx == 0 and by == 0:
            for n, oh, ow, kh, kw, c in T.Parallel(N, OH, OW, KS, KS, C):
                h = oh * S + kh * D - P
                w = ow * S + kw * D - P
                Ref[(n * OH + oh) * OW + ow, (kh * KS + kw) * C + c] = T.if_then_else(
                    h >= 0 and h < H and w >= 0 and w < W, data[n, h, w, c], T.float32(0)
                )

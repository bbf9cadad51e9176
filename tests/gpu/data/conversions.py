"""Conversions between float32 and float16 / bfloat16 / float8 on every path the CUDA code
generator has: vector copies (T.copy between a fragment and a global tensor or a shared tile)
and element loops (T.Parallel). tests/gpu/nan_paths.sh feeds it NaNs with payloads, infinities,
subnormals and overflowing values, and compares the GPU's outputs with the cpu backend's byte
for byte: the bare conversion instructions must fall back to the exact NaN rules.
"""
import tilelang
import tilelang.language as T


@tilelang.jit
def conversions(M=64, N=256, block_M=16, threads=128):

    @T.prim_func
    def main(
        X: T.Tensor((M, N), T.float16),
        F: T.Tensor((M, N), T.float32),
        Z: T.Tensor((M, N), T.float32),
        Y16: T.Tensor((M, N), T.float16),
        Ybf: T.Tensor((M, N), T.bfloat16),
        Y8: T.Tensor((M, N), T.float8_e4m3fn),
        Y5: T.Tensor((M, N), T.float8_e5m2),
        P: T.Tensor((M, N), T.float8_e4m3fn),
    ):
        with T.Kernel(T.ceildiv(M, block_M), threads=threads) as bx:
            xs = T.alloc_shared((block_M, N), T.float16)
            xf = T.alloc_fragment((block_M, N), T.float32)
            ff = T.alloc_fragment((block_M, N), T.float32)
            q = T.alloc_fragment((block_M, N), T.float8_e4m3fn)
            T.copy(X[bx * block_M, 0], xs)
            T.copy(xs, xf)  # float16 shared -> float32 registers: a decoding vector copy
            T.copy(xf, Z[bx * block_M, 0])
            T.copy(F[bx * block_M, 0], ff)
            T.copy(ff, Y16[bx * block_M, 0])  # encoding vector copies
            T.copy(ff, Ybf[bx * block_M, 0])
            # element loops: decode and encode. No arithmetic here: a NaN that arithmetic makes
            # or passes on has the hardware's sign and payload, which differ between cpu and gpu
            for i, j in T.Parallel(block_M, N):
                Y8[bx * block_M + i, j] = xs[i, j]
                Y5[bx * block_M + i, j] = ff[i, j]
            for i, j in T.Parallel(block_M, N):
                q[i, j] = ff[i, j]
            T.copy(q, P[bx * block_M, 0])

    return main

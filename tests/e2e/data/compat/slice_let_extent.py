# The extent of H0:H1 with H1 = H0 + H_per_block (deepseek_v32/sparse_mla_fwd.py): folded through the LETs.
import tilelang
import tilelang.language as T

@tilelang.jit
def k(H, D, padded_H, H_per_block, REPLICATE_H):
    @T.prim_func
    def main(Q: T.Tensor((4, H, D), "float32"), O: T.Tensor((4, H, D), "float32")):
        with T.Kernel(4, H // padded_H, threads=32) as (bx, bz):
            Q_shared = T.alloc_shared((H_per_block, D), "float32")
            g_i = bz
            H0 = g_i * padded_H + (0 if REPLICATE_H == 1 else (bx % REPLICATE_H) * 64)
            H1 = H0 + H_per_block
            T.copy(Q[bx, H0:H1, :], Q_shared)
            T.copy(Q_shared, O[bx, H0:H1, :])
    return main

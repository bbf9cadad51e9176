# T.gemm with a one-row operand (deepseek_nsa/example_tilelang_nsa_bwd.py with groups=1: a [G, BK]
# tile with G = 1): a (1, K) tile is 2-D, as the front end reads it.
import tilelang
import tilelang.language as T


@tilelang.jit
def one_row(G, BS, BK):
    @T.prim_func
    def main(K: T.Tensor((BS, BK), "float16"), Q: T.Tensor((G, BK), "float16"), O: T.Tensor((BS, G), "float32")):
        with T.Kernel(1, threads=128) as bx:
            K_shared = T.alloc_shared([BS, BK], "float16")
            Q_shared = T.alloc_shared([G, BK], "float16")
            acc = T.alloc_fragment([BS, G], "float32")
            T.copy(K, K_shared)
            T.copy(Q, Q_shared)
            T.clear(acc)
            T.gemm(K_shared, Q_shared, acc, transpose_B=True)
            T.copy(acc, O)

    return main

# `from NAME import ...` of a file beside the program (TileLang's block_causal_attention_varlen.py
# imports its helpers from block_causal_attention.py): the helpers run with their own module's
# globals. B must hold what Ref computes without the helpers.
import tilelang
import tilelang.language as T

from sibling_helpers import OFFSET as HELPER_OFFSET, check_block, shifted
from sibling_helpers import cast_f32

OFFSET = 100.0  # not the helpers' OFFSET


@tilelang.jit
def shift(M, block=32):
    check_block(block)

    @T.prim_func
    def main(A: T.Tensor((M,), "float16"), B: T.Tensor((M,), "float32"), Ref: T.Tensor((M,), "float32")):
        with T.Kernel(T.ceildiv(M, block), threads=32) as bx:
            for i in T.Parallel(block):
                if bx * block + i < M:
                    B[bx * block + i] = shifted(cast_f32(A[bx * block + i]))
                    Ref[bx * block + i] = T.cast(A[bx * block + i], "float32") * 2 + HELPER_OFFSET

    return main

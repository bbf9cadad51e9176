# pass_configs reach tilec: with TL_DISABLE_THREAD_STORAGE_SYNC the program places its own barriers,
# and this kernel has none, so each thread reads a neighbour's element before it is written (a
# race tilec leaves in place, as TileLang does: a wrong result); without the config tilec places
# the barrier and the result is right. Prints "correct" or "wrong".
import sys

import numpy as np
import tilelang
import tilelang.language as T

use_config = len(sys.argv) > 1 and sys.argv[1] == "config"
configs = {tilelang.PassConfigKey.TL_DISABLE_THREAD_STORAGE_SYNC: True} if use_config else None


@tilelang.jit(out_idx=[1], pass_configs=configs)
def rotate(N=256, threads=128):

    @T.prim_func
    def main(x: T.Tensor((N,), "float32"), y: T.Tensor((N,), "float32")):
        with T.Kernel(N // threads, threads=threads) as bx:
            s = T.alloc_shared((threads,), "float32")
            tx = T.get_thread_binding()
            s[tx] = x[bx * threads + tx] * 2.0
            y[bx * threads + tx] = s[(tx + 1) % threads]

    return main


x = np.arange(256, dtype=np.float32) + 1
y = rotate()(x)
expected = np.concatenate([np.roll(x[:128] * 2, -1), np.roll(x[128:] * 2, -1)])
print("correct" if np.array_equal(y, expected) else "wrong")

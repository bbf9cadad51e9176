# pass_configs={TL_DISABLE_THREAD_STORAGE_SYNC: True}: the program places its own barriers. Each
# thread writes its element of a shared tile, then reads its neighbour's. With sync=1 the program
# has the T.sync_threads() that needs and every target computes the rotation; with sync=0 it has a
# race that tilec must leave in place (as TileLang does), so the emulators, which run each thread
# to its next barrier (in either order), read elements no thread has written yet and --verify
# reports a wrong result. Without the config tilec places the barrier itself (sync=0 and
# AUTO = True below).
import tilelang
import tilelang.language as T


AUTO = False
pass_configs = {} if AUTO else {tilelang.PassConfigKey.TL_DISABLE_THREAD_STORAGE_SYNC: True}


@tilelang.jit(out_idx=[1], pass_configs=pass_configs)
def rotate(N=256, threads=128, sync=1):

    @T.prim_func
    def main(x: T.Tensor((N,), "float32"), y: T.Tensor((N,), "float32")):
        with T.Kernel(N // threads, threads=threads) as bx:
            s = T.alloc_shared((threads,), "float32")
            tx = T.get_thread_binding()
            s[tx] = x[bx * threads + tx] * 2.0
            if sync:
                T.sync_threads()
            y[bx * threads + tx] = s[(tx + 1) % threads]

    return main

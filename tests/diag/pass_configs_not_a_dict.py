# pass_configs given as something other than a dict (here a list of pairs): named, not ignored
import tilelang
import tilelang.language as T

configs = [(tilelang.PassConfigKey.TL_DISABLE_THREAD_STORAGE_SYNC, True)]


@tilelang.jit(out_idx=[1], pass_configs=configs)
def copy(N=128):

    @T.prim_func
    def main(x: T.Tensor((N,), "float32"), y: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            for i in T.Parallel(N):
                y[i] = x[i]

    return main

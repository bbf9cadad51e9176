# pass_configs={TL_DISABLE_THREAD_STORAGE_SYNC: True} (deepseek_v32/topk_selector.py): the
# program places its barriers itself. Under `if tx < 64`, each thread doubles its own elements
# from one row of a shared ping-pong buffer into the other; the rows are told apart by index
# (r % 2 and (r + 1) % 2), which the barrier analysis, by buffer, cannot see, so without the
# config tilec asks for a barrier there (tests/diag/storage_sync_needed.py). Ref computes the
# same result directly.
import tilelang
import tilelang.language as T

pass_configs = {
    tilelang.PassConfigKey.TL_DISABLE_THREAD_STORAGE_SYNC: True,
}


@tilelang.jit(pass_configs=pass_configs)
def ping_pong(N):

    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32"), Ref: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=128):
            buf = T.alloc_shared((2, N), "float32")
            v = T.alloc_var("float32")
            tx = T.get_thread_binding()
            for s in T.serial(N // 128):
                buf[0, s * 128 + tx] = A[s * 128 + tx]
            T.sync_threads()
            for r in T.serial(4):
                if tx < 64:
                    for s in T.serial(N // 64):
                        v = buf[r % 2, s * 64 + tx]
                        buf[(r + 1) % 2, s * 64 + tx] = v * 2.0 + 1.0
                T.sync_threads()
            for s in T.serial(N // 128):
                B[s * 128 + tx] = buf[0, s * 128 + tx]
            for i in T.Parallel(N):
                Ref[i] = (((A[i] * 2.0 + 1.0) * 2.0 + 1.0) * 2.0 + 1.0) * 2.0 + 1.0

    return main

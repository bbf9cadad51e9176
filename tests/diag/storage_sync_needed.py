# tilec: run
# tests/e2e/data/compat/storage_sync_off.py without its pass_configs: the rows of buf are told apart
# by index, which the barrier analysis (by buffer) cannot see, so it asks for a barrier inside the if.
import tilelang
import tilelang.language as T



@tilelang.jit
def ping_pong(N=256):

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

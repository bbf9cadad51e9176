# T.rng_init / T.rng_rand: cuRAND's Philox4_32_10, one generator per thread. Thread t of
# `per_thread` starts at offset 4 * t and draws 4 numbers; `one_thread` draws 16 numbers from
# offset 0 in a T.Parallel loop of its one thread (rand/rand_uint.py's form). Both give numbers
# 0..15 of the stream (the two Out must be equal), and with seed 0 and subsequence 0 numbers
# 0..3 are Random123's known answer for Philox-4x32-10 with a zero counter and key (First must
# equal Ref).
import tilelang
import tilelang.language as T

N = 16


@T.prim_func
def per_thread(Out: T.Tensor((N,), "uint32")):
    with T.Kernel(1, threads=4) as bx:
        tx = T.get_thread_binding()
        T.rng_init(0, 0, bx * N + tx * 4)
        for k in T.serial(4):
            Out[tx * 4 + k] = T.rng_rand()


@T.prim_func
def one_thread(Out: T.Tensor((N,), "uint32"), First: T.Tensor((4,), "uint32"), Ref: T.Tensor((4,), "uint32")):
    with T.Kernel(1, threads=1) as bx:
        T.rng_init(0, 0, bx * N)
        for i in T.Parallel(N):
            Out[i] = T.rng_rand()
        for k in T.serial(4):
            First[k] = Out[k]
        Ref[0] = T.uint32(0x6627E8D5)
        Ref[1] = T.uint32(0xE169C58D)
        Ref[2] = T.uint32(0xBC57AC4C)
        Ref[3] = T.uint32(0x9B00DBD8)

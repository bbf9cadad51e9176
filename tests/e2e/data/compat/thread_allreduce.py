# TVM's thread all-reduce as TileLang's gemv examples write it: T.attr with a T.comm_reducer
# around T.evaluate(T.tvm_thread_allreduce(...)). Each group of threads that differ only in
# `tk` combines its partial sums (C) and maxima (Mx); Ref and RefMx fold the same values through
# shared memory by hand, in the same order, so they must be equal bit for bit.
import tilelang
import tilelang.language as T

N, K = 64, 256
BN, RT = 4, 32


@T.prim_func
def gemv(A: T.Tensor((K,), "float32"), B: T.Tensor((N, K), "float32"), C: T.Tensor((N,), "float32"),
         Mx: T.Tensor((N,), "float32"), Ref: T.Tensor((N,), "float32"), RefMx: T.Tensor((N,), "float32")):
    with T.Kernel(N // BN, threads=(BN, RT)) as bn:
        tn = T.get_thread_binding(0)
        tk = T.get_thread_binding(1)
        acc = T.alloc_local((1,), "float32")
        big = T.alloc_local((1,), "float32")
        T.clear(acc)
        big[0] = -T.infinity("float32")
        for k in T.serial(K // RT):
            acc[0] += A[k * RT + tk] * B[bn * BN + tn, k * RT + tk]
            big[0] = T.max(big[0], B[bn * BN + tn, k * RT + tk])
        red = T.alloc_local((1,), "float32")
        with T.attr(T.comm_reducer(lambda x, y: x + y, [T.cast(0, "float32")]), "reduce_scope",
                    T.reinterpret(T.uint64(0), dtype="handle")):
            T.evaluate(T.tvm_thread_allreduce(T.uint32(1), acc[0], True, red[0], tk, dtype="handle"))
        C[bn * BN + tn] = red[0]
        with T.attr(T.comm_reducer(lambda x, y: T.max(x, y), [-T.infinity("float32")]), "reduce_scope",
                    T.reinterpret(T.uint64(0), dtype="handle")):
            T.evaluate(T.tvm_thread_allreduce(T.uint32(1), big[0], True, red[0], tk, dtype="handle"))
        Mx[bn * BN + tn] = red[0]
        # the same folds by hand
        S = T.alloc_shared((BN * RT,), "float32")
        S[tn + tk * BN] = acc[0]
        T.sync_threads()
        red[0] = S[tn]
        for k in T.serial(1, RT):
            red[0] = red[0] + S[tn + k * BN]
        T.sync_threads()
        Ref[bn * BN + tn] = red[0]
        S[tn + tk * BN] = big[0]
        T.sync_threads()
        red[0] = S[tn]
        for k in T.serial(1, RT):
            red[0] = T.max(red[0], S[tn + k * BN])
        RefMx[bn * BN + tn] = red[0]

# Dependent `with T.Kernel(...)` blocks in one prim_func: a split kernel writes partial sums, a
# combine reads them, a last block scales the combined sums. TileLang launches the three in
# turn; tilec launches its one kernel three times over the largest grid, each block guarded by
# its launch and its own grid. `split_combine` must give the Out and Scaled that `direct`
# computes in one block with the same additions in the same order.
import tilelang
import tilelang.language as T

B, S, C = 8, 4, 16  # rows, splits, elements per split


@T.prim_func
def split_combine(A: T.Tensor((B, S * C), "float32"), Partial: T.Tensor((B, S), "float32"), Out: T.Tensor((B,), "float32"),
                  Scaled: T.Tensor((B,), "float32")):
    with T.Kernel(B, S, threads=32) as (b, s):
        p = T.alloc_local((1,), "float32")
        p[0] = 0
        for j in T.serial(C):
            p[0] = p[0] + A[b, s * C + j]
        Partial[b, s] = p[0]
    with T.Kernel(B, threads=32) as b:
        acc = T.alloc_local((1,), "float32")
        acc[0] = 0
        for s in T.serial(S):
            acc[0] = acc[0] + Partial[b, s]
        Out[b] = acc[0]
    with T.Kernel(2, threads=32) as h:
        for i in T.Parallel(B // 2):
            Scaled[h * (B // 2) + i] = Out[h * (B // 2) + i] * 2


@T.prim_func
def direct(A: T.Tensor((B, S * C), "float32"), Partial: T.Tensor((B, S), "float32"), Out: T.Tensor((B,), "float32"),
           Scaled: T.Tensor((B,), "float32")):
    with T.Kernel(B, threads=32) as b:
        acc = T.alloc_local((1,), "float32")
        p = T.alloc_local((1,), "float32")
        acc[0] = 0
        for s in T.serial(S):
            p[0] = 0
            for j in T.serial(C):
                p[0] = p[0] + A[b, s * C + j]
            Partial[b, s] = p[0]
            acc[0] = acc[0] + p[0]
        Out[b] = acc[0]
        Scaled[b] = acc[0] * 2


# T.sync_grid: every block of the grid meets there; tilec starts the kernel's next launch at it.
# `grid_sync` must give what `direct` gives too.
@T.prim_func
def grid_sync(A: T.Tensor((B, S * C), "float32"), Partial: T.Tensor((B, S), "float32"), Out: T.Tensor((B,), "float32"),
              Scaled: T.Tensor((B,), "float32")):
    with T.Kernel(B, S, threads=32) as (b, s):
        p = T.alloc_local((1,), "float32")
        acc = T.alloc_local((1,), "float32")
        p[0] = 0
        for j in T.serial(C):
            p[0] = p[0] + A[b, s * C + j]
        Partial[b, s] = p[0]
        T.sync_grid()
        if s == 0:
            acc[0] = 0
            for k in T.serial(S):
                acc[0] = acc[0] + Partial[b, k]
            Out[b] = acc[0]
            Scaled[b] = acc[0] * 2


# The same blocks with runtime locals and a local buffer of the same names in each (TileLang's
# fused-MoE kernels assign `m_start = bx * block` in both of theirs): each block's names are its
# own. `split_combine_locals` must give what `direct` gives too.
@T.prim_func
def split_combine_locals(A: T.Tensor((B, S * C), "float32"), Partial: T.Tensor((B, S), "float32"),
                         Out: T.Tensor((B,), "float32"), Scaled: T.Tensor((B,), "float32")):
    with T.Kernel(B, S, threads=32) as (b, s):
        base = s * C
        acc = T.alloc_local((1,), "float32")
        acc[0] = 0
        for j in T.serial(C):
            acc[0] = acc[0] + A[b, base + j]
        Partial[b, s] = acc[0]
    with T.Kernel(B, threads=32) as b:
        base = b
        acc = T.alloc_local((1,), "float32")
        acc[0] = 0
        for s in T.serial(S):
            acc[0] = acc[0] + Partial[base, s]
        Out[base] = acc[0]
    with T.Kernel(2, threads=32) as h:
        base = h * (B // 2)
        for i in T.Parallel(B // 2):
            Scaled[base + i] = Out[base + i] * 2


# T.alloc_global: the partial sums in a global workspace the runtime allocates for the launch
# (TileLang's split flash-decoding keeps `glse` and `Output_partial` so), and a count of the
# split blocks in a second one, which starts at zero. The combine copies the workspace to
# Partial; `workspace` must give what `direct` gives too.
@T.prim_func
def workspace(A: T.Tensor((B, S * C), "float32"), Partial: T.Tensor((B, S), "float32"), Out: T.Tensor((B,), "float32"),
              Scaled: T.Tensor((B,), "float32")):
    W = T.alloc_global((B, S), "float32")
    Count = T.alloc_global([B], "int32")
    with T.Kernel(B, S, threads=32) as (b, s):
        p = T.alloc_local((1,), "float32")
        p[0] = 0
        for j in T.serial(C):
            p[0] = p[0] + A[b, s * C + j]
        W[b, s] = p[0]
        if T.get_thread_binding() == 0:  # every thread runs a statement outside T.Parallel: one adds
            T.atomic_add(Count[b], 1)
    with T.Kernel(B, threads=32) as b:
        acc = T.alloc_local((1,), "float32")
        acc[0] = 0
        for s in T.serial(S):
            acc[0] = acc[0] + W[b, s]
            Partial[b, s] = W[b, s]
        Out[b] = acc[0]
    with T.Kernel(2, threads=32) as h:
        for i in T.Parallel(B // 2):
            Scaled[h * (B // 2) + i] = Out[h * (B // 2) + i] * (Count[h * (B // 2) + i] // S * 2)

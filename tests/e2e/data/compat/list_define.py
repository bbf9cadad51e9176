# A list-valued factory parameter given on the command line, -D sizes=[16,32] (TileLang's grouped
# gemm takes batch_sizes_list so): the kernel scales each group of rows by its group number + 1,
# block by block into B and row by row (the group from the row's index) into Ref.
import tilelang
import tilelang.language as T


@tilelang.jit
def scale_groups(sizes, N=8):
    total = sum(sizes)

    @T.prim_func
    def k(A: T.Tensor((total, N), "float32"), B: T.Tensor((total, N), "float32"), Ref: T.Tensor((total, N), "float32")):
        with T.Kernel(len(sizes), threads=32) as g:
            start = 0
            for gi, n in enumerate(sizes):  # a list: unrolled at compile time, one branch per group
                if g == gi:
                    for i, j in T.Parallel(n, N):
                        B[start + i, j] = A[start + i, j] * (gi + 1)
                start += n
            if g == 0:
                for i, j in T.Parallel(total, N):
                    group = 1
                    end = 0
                    for n in sizes[:-1]:
                        end += n
                        group = group + T.if_then_else(i >= end, 1, 0)
                    Ref[i, j] = A[i, j] * group

    return k

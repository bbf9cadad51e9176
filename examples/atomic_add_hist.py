"""Histogram of int32 values into num_bins bins, with per-thread atomics.

Each block owns block_size consecutive elements. Every thread takes every threads-th element of
the block's range and bumps the matching bin of a shared-memory histogram with an element-wise
T.atomic_add; the block's histogram is then added into the global one. Values outside
[0, num_bins) are clamped into the edge bins, and each thread also counts how many it clamped in a
T.alloc_var and adds that count to Clipped[0] (one atomic per thread). Hist and Clipped must be
zeroed by the caller. N = 10000 is NOT a multiple of block_size = 1024.
"""
import tilelang
import tilelang.language as T


@tilelang.jit
def histogram(N=10000, num_bins=64, block_size=1024, threads=256, debug=False):
    assert block_size % threads == 0

    @T.prim_func
    def main(
        X: T.Tensor((N,), T.int32),
        Hist: T.Tensor((num_bins,), T.int32),
        Clipped: T.Tensor((1,), T.int32),
    ):
        with T.Kernel(T.ceildiv(N, block_size), threads=threads) as bx:
            tx = T.get_thread_binding(0)
            block_hist = T.alloc_shared((num_bins,), T.int32)
            clipped = T.alloc_var(T.int32, init=0)

            T.clear(block_hist)
            for it in T.serial(block_size // threads):
                idx = bx * block_size + it * threads + tx
                if idx < N:
                    v = X[idx]
                    if v < 0 or v >= num_bins:
                        clipped += 1
                    T.atomic_add(block_hist[T.min(T.max(v, 0), num_bins - 1)], 1)
            if debug:
                T.print(block_hist, msg="block histogram")
            for b in T.Parallel(num_bins):
                T.atomic_add(Hist[b], block_hist[b])
            T.atomic_add(Clipped[0], clipped)

    return main


def ref_program(x, num_bins=64):
    import torch

    clipped = ((x < 0) | (x >= num_bins)).sum().to(torch.int32).reshape(1)
    return torch.bincount(x.clamp(0, num_bins - 1), minlength=num_bins).to(torch.int32), clipped


if __name__ == "__main__":
    import torch

    kernel = histogram(N=1 << 20)
    x = torch.randint(-8, 72, (1 << 20,), device="cuda", dtype=torch.int32)
    hist = torch.zeros(64, device="cuda", dtype=torch.int32)
    clipped = torch.zeros(1, device="cuda", dtype=torch.int32)
    kernel(x, hist, clipped)
    want_hist, want_clipped = ref_program(x)
    assert torch.equal(hist, want_hist) and torch.equal(clipped, want_clipped)
    print("histogram: all checks pass")

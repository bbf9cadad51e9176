"""Reverse every block of `threads` consecutive elements, scaled by 2, at the thread level.

Each thread computes its element into a per-thread T.alloc_local buffer, copies that buffer into
its own slot of shared memory with a per-thread tile copy `T.copy(loc, s[tx:tx + 1])` (an operand
is per-thread storage, so every thread does the copy itself), and then reads the mirror slot,
which another thread wrote: the compiler places a barrier between the two. N = 1000 is NOT a
multiple of threads = 64 (the last block reads zeros past the end).
"""
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def block_reverse(N=1000, threads=64, dtype=T.float32):
    @T.prim_func
    def main(A: T.Tensor((N,), dtype), B: T.Tensor((N,), dtype)):
        with T.Kernel(T.ceildiv(N, threads), threads=threads) as bx:
            s = T.alloc_shared((threads,), dtype)
            loc = T.alloc_local((1,), dtype)
            tx = T.get_thread_binding(0)
            loc[0] = A[bx * threads + tx] * 2.0
            T.copy(loc, s[tx:tx + 1])
            B[bx * threads + tx] = s[threads - 1 - tx]

    return main


def ref_program(a, threads=64):
    import torch

    n = a.shape[0]
    padded = torch.zeros((n + threads - 1) // threads * threads, dtype=a.dtype, device=a.device)
    padded[:n] = a * 2
    return padded.view(-1, threads).flip(1).reshape(-1)[:n]


if __name__ == "__main__":
    import torch

    kernel = block_reverse(N=4096)
    a = torch.randn(4096, device="cuda")
    torch.testing.assert_close(kernel(a), ref_program(a))
    print("block_reverse: all checks pass")

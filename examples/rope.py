"""Rotary position embedding (GPT-NeoX layout) applied to a (seq, heads, dim) tensor:
for the pair (x1, x2) = (x[..., i], x[..., i + dim/2]) at position p,
    theta = p * base^(-2i/dim),  out1 = x1 cos(theta) - x2 sin(theta),  out2 = x2 cos(theta) + x1 sin(theta).

The angles are computed in the kernel in float32 with T.pow, T.cos and T.sin; `offset` shifts the
positions (decoding with a KV cache). The default seq_len = 100 is NOT a multiple of block_S = 32.
"""
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def rope(seq_len=100, heads=4, dim=64, block_S=32, base=10000.0, offset=0, threads=128, dtype=T.float16):
    assert dim % 2 == 0, "rotary dim must be even"
    half = dim // 2
    accum_dtype = T.float32

    @T.prim_func
    def main(
        X: T.Tensor((seq_len, heads, dim), dtype),
        Y: T.Tensor((seq_len, heads, dim), dtype),
    ):
        with T.Kernel(T.ceildiv(seq_len, block_S), heads, threads=threads) as (bx, by):
            x = T.alloc_fragment((block_S, dim), accum_dtype)
            y = T.alloc_shared((block_S, dim), dtype)

            T.copy(X[bx * block_S:(bx + 1) * block_S, by, :], x)
            for s, i in T.Parallel(block_S, half):
                pos = T.cast(bx * block_S + s + offset, accum_dtype)
                theta = pos * T.pow(base, -2.0 * i / dim)
                c = T.cos(theta)
                sn = T.sin(theta)
                y[s, i] = x[s, i] * c - x[s, i + half] * sn
                y[s, i + half] = x[s, i + half] * c + x[s, i] * sn
            T.copy(y, Y[bx * block_S:(bx + 1) * block_S, by, :])

    return main


def ref_program(x, base=10000.0, offset=0):
    import torch

    seq_len, _, dim = x.shape
    half = dim // 2
    inv_freq = base ** (-torch.arange(0, half, dtype=torch.float32, device=x.device) * 2 / dim)
    theta = (torch.arange(seq_len, device=x.device, dtype=torch.float32) + offset)[:, None] * inv_freq
    cos, sin = theta.cos()[:, None, :], theta.sin()[:, None, :]
    x1, x2 = x[..., :half].float(), x[..., half:].float()
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1).to(x.dtype)


if __name__ == "__main__":
    import torch

    kernel = rope(seq_len=4096, heads=32, dim=128)
    x = torch.randn(4096, 32, 128, device="cuda", dtype=torch.float16)
    torch.testing.assert_close(kernel(x), ref_program(x), rtol=1e-2, atol=1e-2)
    print("rope: all checks pass")

#!/usr/bin/env python3
# -*- coding: utf-8 -*-
"""Eager-style kernels plus the kind of module-level Python that surrounds them."""
from __future__ import annotations

import os, sys
from dataclasses import dataclass, field
from typing import Optional, Tuple

import tilelang
import tilelang.language as T

DEFAULT_BLOCK = 128
DTYPES = {"fp16": T.float16, "bf16": T.bfloat16, 'fp32': T.float32}
_cache: dict[str, object] = {}


@tilelang.jit
def rms_norm(A, block_M=DEFAULT_BLOCK, eps=1e-6, dtype=T.float16):
    M, N = T.const("M, N")
    A: T.Tensor((M, N), dtype)
    B = T.empty((M, N), dtype)
    with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
        A_local = T.alloc_fragment((block_M, N), "float")
        A_pow = T.alloc_fragment((block_M, N), "float")
        A_sum = T.alloc_fragment((block_M,), "float")
        T.copy(A[bx * block_M:(bx + 1) * block_M, :], A_local)
        for i, j in T.Parallel(block_M, N):
            A_pow[i, j] = A_local[i, j] * A_local[i, j]
        T.reduce_sum(A_pow, A_sum, dim=1)
        for i in T.Parallel(block_M):
            A_sum[i] = T.rsqrt(A_sum[i] / N + eps)
        for i, j in T.Parallel(block_M, N):
            A_local[i, j] *= A_sum[i]
        T.copy(A_local, B[bx * block_M, 0])
    return B


@T.prim_func
def cumsum_rows(X: T.Tensor((DEFAULT_BLOCK, 64), "float32"), Y: T.Tensor((DEFAULT_BLOCK, 64), "float32")):
    with T.Kernel(1, threads=(32, 4)) as _:
        tx = T.get_thread_binding(0)
        buf = T.alloc_shared((DEFAULT_BLOCK, 64), "float32")
        acc = T.alloc_var("int32")
        acc = 0
        T.copy(X, buf)
        T.cumsum(buf, dim=1)
        if tx == 0 and acc >= 0:
            T.print(buf[0, 0], msg="first")
        T.atomic_add(Y[0, 0], buf[0, 63])
        T.copy(buf[0:4, :], Y[0:4, :])


@dataclass(frozen=True)
class Config:
    block_M: int = 128
    block_N: int = field(default=64)
    name: Optional[str] = None

    def key(self) -> Tuple[int, int]:
        return (self.block_M, self.block_N)

    @property
    def area(self):
        return self.block_M * self.block_N

    def __repr__(self):
        return f'Config({self.block_M}x{self.block_N}, name={self.name!r})'


class Registry(dict):
    """Maps names to factories."""

    def register(self, name, *, override=False):
        def deco(fn):
            if name in self and not override:
                raise KeyError(f"{name} already registered")
            self[name] = fn
            return fn
        return deco


registry = Registry()


@registry.register("rms", override=True)
def _build_rms(cfg: Config, /, verbose=False, *extra, **kwargs):
    global _cache
    key = (cfg.key(), tuple(sorted(kwargs.items())))
    if (hit := _cache.get(str(key))) is not None:
        return hit
    try:
        kernel = rms_norm
    except (ImportError, RuntimeError) as e:
        print("failed:", e, file=sys.stderr)
        raise
    else:
        _cache[str(key)] = kernel
    finally:
        pass
    return kernel


async def fetch(session, url):
    async with session.get(url) as resp:
        async for chunk in resp.content:
            yield chunk
    await session.close()


def gen(n):
    i = 0
    while i < n:
        x = yield i
        i += 1 if x is None else x
    else:
        return
    yield from range(3)


def describe(value):
    match value:
        case {"kind": "gemm", **rest}:
            return "gemm"
        case [x, y, *_]:
            return f"pair {x} {y}"
        case _:
            return "other"


def misc():
    nums = [1, 2, 3, *range(4, 6)]
    squares = {n: n ** 2 for n in nums if n % 2}
    evens = {n for n in nums if not n & 1}
    total = sum(n for n in nums)
    first, *rest = nums
    a = b = c = 0
    a, b = b, a
    m = [[i * j for j in range(3)] for i in range(3)]
    s = 'it''s' "concatenated" \
        " across lines"
    t = r'\d+\.\d*' + b'\x00\xff'.hex()
    u = """triple "quoted"
    string with 'quotes' and \t escapes"""
    v = 0o777 | 0b1010 ^ 0xDEAD_BEEF & ~0
    w = 1_000_000 // 7 % 3 << 2 >> 1
    z = 3.14e-10 + 2j - .5 * 1e3
    cond = 0 < a <= b < 10 != c
    f = lambda *args, **kw: (args, kw)
    x = nums[::2], nums[1:], nums[:-1], nums[-1]
    del nums[0]
    nonlocal_example = None
    print(s, t, u, v, w, z, cond, f, x, squares, evens, total, first, rest, m, sep=", ", end="\n")
    with open(os.devnull, "w") as fh, open(os.devnull) as fh2:
        fh.write(str(fh2))
    with (
        open(os.devnull) as f1,
        open(os.devnull) as f2,
    ):
        pass
    for k, v in sorted(DTYPES.items(), key=lambda kv: kv[0], reverse=True):
        if k.startswith("f"):
            continue
        elif k == "bf16":
            break
    else:
        pass
    assert isinstance(a, int), "a must be an int"
    return ...


if __name__ == "__main__":
    import argparse
    p = argparse.ArgumentParser()
    p.add_argument("--n", type=int, default=DEFAULT_BLOCK)
    ns = p.parse_args()
    sys.exit(0 if misc() is ... else 1)

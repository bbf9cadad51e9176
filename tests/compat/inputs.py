"""Inputs a kernel's contract requires, made the way the TileLang file's own main() makes them.

Most kernels verify on `tilec run`'s seeded random inputs. A few compute something only defined
on a domain: a Sinkhorn backward pass differentiates at a doubly stochastic matrix (its conjugate
gradient diverges elsewhere), and a gated delta rule expects log-gates that are cumulative sums
of log-sigmoids (positive random gates grow its float16 state past the largest float16), and a
sparse attention reads keys at the block offsets and columns its index inputs give, and a top-k
selection takes each row's range from its starts and ends, and the varlen sparse attentions of
dsa_sparse_finetune give each token its own row (random token indices send two blocks to one
output row, and the result then depends on which writes last), as does deepseek_nsa's varlen
attention (random token indices read its Offsets out of range). For
those, the harness runs the kernel once with `--save` to learn each tensor's shape and dtype,
replaces the inputs named here with ones built as the file's main() builds them (with numpy
instead of torch), and verifies with `--load`. Each recipe names the lines of the file it
follows. A kernel without a recipe keeps the random inputs.
"""
import os

try:
    import numpy as np
except ImportError:  # the harness then verifies these kernels on random inputs, and says so
    np = None


def _normalized(rng, shape, dtype):
    x = rng.standard_normal(shape)
    return (x / np.linalg.norm(x, axis=-1, keepdims=True)).astype(dtype)


def kda_chunk_delta_h(saved, defs, rng):
    """kda/chunk_delta_h_fwd.py prepare_input(): K, W, U L2-normalized over the last axis, G the
    per-chunk cumulative sum of logsigmoid(randn), the initial state randn."""
    out = {n: _normalized(rng, saved[n].shape, saved[n].dtype) for n in ("K", "W", "U") if n in saved}
    if "GK" in saved:
        g = saved["GK"]
        chunk = int(defs.get("chunk_size", "64"))
        b, s = g.shape[:2]
        if s % chunk:
            raise ValueError(f"S={s} is not a multiple of chunk_size={chunk}")
        log_sigmoid = -np.logaddexp(0.0, -rng.standard_normal(g.shape))
        per_chunk = log_sigmoid.reshape(b, s // chunk, chunk, *g.shape[2:]).cumsum(axis=2)
        out["GK"] = per_chunk.reshape(g.shape).astype(g.dtype)
    if "initial_state" in saved:
        s = saved["initial_state"]
        out["initial_state"] = rng.standard_normal(s.shape).astype(s.dtype)
    return out


def sinkhorn_bwd(saved, defs, rng):
    """deepseek_mhc/example_mhc_bwd.py main(): M uniform in [0, 4), R = sinkhorn_forward(M, 100)
    (exp, then columns and rows normalized in turn), the incoming gradient randn."""
    out = {}
    if "out" in saved:
        o = saved["out"]
        r = np.exp(rng.uniform(0.0, 4.0, o.shape))
        for _ in range(100):
            r = r / r.sum(axis=-2, keepdims=True)
            r = r / r.sum(axis=-1, keepdims=True)
        out["out"] = r.astype(o.dtype)
    if "dout" in saved:
        out["dout"] = rng.standard_normal(saved["dout"].shape).astype(saved["dout"].dtype)
    return out


def minference_indexes(saved, defs, rng):
    """minference/example_vertical_slash_sparse_attn.py main() builds its sparse pattern with
    convert_vertical_slash_indexes (a CUDA op): for each 64-row block of queries, the key blocks
    that slash diagonals cover (BlockOffset, their first key; BlockCount of them, the block on
    the diagonal always among them, none after it) and the single key columns outside those
    blocks that vertical lines select (ColumnIndex, ascending; ColumnCount). The same shape of
    pattern, drawn at random; Q, K and V keep their random values."""
    block = 64
    out = {}
    need = ("BlockCount", "BlockOffset", "ColumnCount", "ColumnIndex")
    if not all(n in saved for n in need):
        return out
    bc, bo, cc, ci = (saved[n].copy() for n in need)
    bo[...] = 0
    ci[...] = 0
    b, h, rows = bc.shape
    for z in range(b):
        for y in range(h):
            for x in range(rows):
                before = rng.permutation(x)[: rng.integers(0, min(x, bo.shape[-1] - 1) + 1)]
                blocks = sorted(int(i) * block for i in before) + [x * block]
                bc[z, y, x] = len(blocks)
                bo[z, y, x, : len(blocks)] = blocks
                free = [c for c in range(x * block) if c // block not in set(before)]
                cols = sorted(rng.permutation(free)[: rng.integers(0, min(len(free), ci.shape[-1]) + 1)]) if free else []
                cc[z, y, x] = len(cols)
                ci[z, y, x, : len(cols)] = cols
    return dict(zip(need, (bc, bo, cc, ci)))


def topk_selector(saved, defs, rng):
    """deepseek_v32/topk_selector.py test_topk_selector(): input randn, starts 0, ends seq_len
    (each row's whole range)."""
    out = {}
    if "input" in saved:
        x = saved["input"]
        out["input"] = rng.standard_normal(x.shape).astype(x.dtype)
        if "starts" in saved:
            out["starts"] = np.zeros_like(saved["starts"])
        if "ends" in saved:
            out["ends"] = np.full_like(saved["ends"], x.shape[1])
    return out


def dsa_varlen(saved, defs, rng):
    """dsa_sparse_finetune/*.py test_*(): the tokens of a batch of variable-length sequences,
    Offsets the cumulative lengths (prepare_token_indices turns them into TokenIndices, one
    (sequence, position) row per token), and for each token t the key indices it attends to,
    torch.randperm(max(1, t))[:topk] (Indices / TopkIndices) with the rest of the row past the
    end of the sequence, which the kernels mask out. Random indices would send two blocks to
    the same output row: the result would then depend on which block writes last. One sequence
    holds every token here; Offsets repeats its end for the batch entries that stay empty."""
    out = {}
    tok = saved.get("TokenIndices")
    if tok is None or "Offsets" not in saved:
        return out
    s = tok.shape[0]
    offsets = np.full_like(saved["Offsets"], s)
    offsets[0] = 0
    out["Offsets"] = offsets
    rows = np.zeros_like(tok)
    rows[:, 1] = np.arange(s)
    out["TokenIndices"] = rows
    for name in ("Indices", "TopkIndices"):
        if name in saved:
            idx = np.full_like(saved[name], s)
            k = idx.shape[-1]
            for t in range(s):
                for g in range(idx.shape[1] if idx.ndim == 3 else 1):
                    perm = rng.permutation(max(1, t))[:k]
                    if idx.ndim == 3:
                        idx[t, g, : len(perm)] = perm
                    else:
                        idx[t, : len(perm)] = perm
            out[name] = idx
    return out


def nsa_varlen(saved, defs, rng):
    """deepseek_nsa/example_tilelang_nsa_fwd_varlen.py __main__ (lines 304-358): the tokens split
    into `batch` sequences at random points (Offsets, the cumulative lengths; TokenIndices one
    (sequence, position) row per token, as prepare_token_indices makes them), each token's
    selected blocks a sorted random choice among the blocks up to its position with the rest of
    the row C_SEQ_LEN (past the end, skipped by the kernel), and BlockCounts in [1, S]. Random
    TokenIndices index the batch+1 Offsets out of range (60 of 64 blocks at the compat sizes):
    each block then reads and writes rows nobody chose, and the result depends on the schedule."""
    out = {}
    tok = saved.get("TokenIndices")
    if tok is None or "Offsets" not in saved or "BlockIndices" not in saved:
        return out
    c = tok.shape[0]
    n = saved["Offsets"].shape[0] - 1
    bs = int(defs.get("block_size", "64"))
    cuts = np.sort(rng.choice(np.arange(1, c), size=min(n - 1, c - 1), replace=False)) if n > 1 else []
    offsets = np.array([0, *cuts, *([c] * (n - len(cuts)))], dtype=saved["Offsets"].dtype)
    out["Offsets"] = offsets
    rows = np.zeros_like(tok)
    for i in range(n):
        for t in range(offsets[i], offsets[i + 1]):
            rows[t] = (i, t - offsets[i])
    out["TokenIndices"] = rows
    bi = np.full_like(saved["BlockIndices"], c)
    s = bi.shape[-1]
    for t in range(c):
        pos = int(rows[t, 1])
        for h in range(bi.shape[1]):
            pick = np.sort(rng.permutation(max(1, -(-pos // bs)))[:s])
            bi[t, h, : len(pick)] = pick
    out["BlockIndices"] = bi
    if "BlockCounts" in saved:
        out["BlockCounts"] = rng.integers(1, s + 1, saved["BlockCounts"].shape).astype(saved["BlockCounts"].dtype)
    return out


RECIPES = {
    ("deepseek_nsa/example_tilelang_nsa_fwd_varlen.py", "native_sparse_attention_varlen"): nsa_varlen,
    ("kda/chunk_delta_h_fwd.py", "tilelang_chunk_gated_delta_rule_fwd_h"): kda_chunk_delta_h,
    ("deepseek_mhc/example_mhc_bwd.py", "sinkhorn_bwd_implicit_cg"): sinkhorn_bwd,
    ("minference/example_vertical_slash_sparse_attn.py", "_tl_vs_sparse_flashattn"): minference_indexes,
    ("deepseek_v32/topk_selector.py", "tl_topk_impl"): topk_selector,
    ("dsa_sparse_finetune/sparse_mla_fwd.py", "sparse_mla_fwd"): dsa_varlen,
    ("dsa_sparse_finetune/sparse_mla_topk_reducesum.py", "tl_sparse_mla_topk_reducesum_impl"): dsa_varlen,
    ("dsa_sparse_finetune/indexer_topk_reducesum.py", "tl_indexer_topk_reducesum_impl"): dsa_varlen,
    ("dsa_sparse_finetune/indexer_bwd.py", "tl_indexer_bwd_impl"): dsa_varlen,
}


def recipe_for(path, kernel):
    for (suffix, name), fn in RECIPES.items():
        if kernel == name and path.replace(os.sep, "/").endswith("/" + suffix):
            return fn
    return None


def write_inputs(fn, saved_dir, defs, in_dir, seed=0):
    """Builds the recipe's inputs from the tensors `tilec run --save` left in saved_dir and writes
    them to in_dir as NAME.npy; returns the names written."""
    saved = {f[:-4]: np.load(os.path.join(saved_dir, f)) for f in os.listdir(saved_dir) if f.endswith(".npy")}
    made = fn(saved, defs, np.random.default_rng(seed))
    os.makedirs(in_dir, exist_ok=True)
    for name, arr in made.items():
        np.save(os.path.join(in_dir, name + ".npy"), arr)
    return sorted(made)

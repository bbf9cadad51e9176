"""Differential testing of code generation: write a random elementwise TileLang kernel.

    python3 tests/e2e/diff_gen.py SEED OUTDIR    -> OUTDIR/kSEED.py

The kernel copies a tile of A to shared memory and stores a random expression tree over it and B
(float32/float16/bfloat16/int32/int8 inputs; +, -, *, /, //, %, bit ops, min/max, exp, sqrt,
tanh, floor, if_then_else) cast to a random output dtype, at a random ragged shape, so that
`tilec run --verify` compares the cpu backend with the reference on each one.
"""
import random
import sys

seed = int(sys.argv[1])
outdir = sys.argv[2]
random.seed(seed)
dt_in=random.choice(["float32","float16","bfloat16","int32","int8"])
is_int = dt_in.startswith("int")
def leaf():
    r=random.random()
    if r<0.5: return "A[i, j]"
    if r<0.8: return "B[i, j]"
    if is_int: return str(random.randint(-5,5) or 1)
    return repr(round(random.uniform(-2,2),3))
def expr(d):
    if d==0: return leaf()
    r=random.random()
    a=expr(d-1); b=expr(d-1)
    if is_int:
        ops=["+","-","*","//","%","&","|","^"]
        op=random.choice(ops)
        if op in ("//","%"): return f"({a} {op} T.max({b}, 1))"
        if op=="*" : return f"({a} * {b})"
        return f"({a} {op} {b})"
    ops=["+","-","*","/","max","min","exp","abs","sel","sqrt","tanh","floor"]
    op=random.choice(ops)
    if op=="/": return f"({a} / (T.abs({b}) + 1.0))"
    if op=="max": return f"T.max({a}, {b})"
    if op=="min": return f"T.min({a}, {b})"
    if op=="exp": return f"T.exp(T.min({a}, 4.0))"
    if op=="abs": return f"T.abs({a})"
    if op=="sqrt": return f"T.sqrt(T.abs({a}))"
    if op=="tanh": return f"T.tanh({a})"
    if op=="floor": return f"T.floor({a})"
    if op=="sel": return f"T.if_then_else({a} > {b}, {a}, {b})"
    return f"({a} {op} {b})"
out_dt=random.choice(["float32","float16"] if not is_int else ["int32","int16"])
e=expr(random.randint(1,4))
M=random.randint(1,70); N=random.randint(1,70); bm=random.choice([8,16,32]); bn=random.choice([8,16,32])
src=f'''import tilelang.language as T

def k(M={M}, N={N}, bm={bm}, bn={bn}):
    @T.prim_func
    def main(A: T.Tensor((M, N), "{dt_in}"), B: T.Tensor((M, N), "{dt_in}"), C: T.Tensor((M, N), "{out_dt}")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=64) as (bx, by):
            As = T.alloc_shared((bm, bn), "{dt_in}")
            T.copy(A[by * bm, bx * bn], As)
            for i, j in T.Parallel(bm, bn):
                C[by * bm + i, bx * bn + j] = T.cast({e.replace("A[i, j]","As[i, j]").replace("B[i, j]","B[by * bm + i, bx * bn + j]")}, "{out_dt}")
    return main
'''
open(f"{outdir}/k{seed}.py", "w").write(src)

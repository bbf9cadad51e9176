"""Differential testing of tile operations: write a random TileLang kernel that is a tiled GEMM
(float16/bfloat16/float32/float8_e4m3fn operands, random transposes, pipeline depth, ragged
M, N, K), a reduction (every kind, dim 0/1/-1, clear or accumulate) or a cumsum (either dim,
forward or reverse).

    python3 tests/e2e/diff_gen_tile.py SEED OUTDIR    -> OUTDIR/tSEED.py
"""
import random
import sys

seed = int(sys.argv[1])
outdir = sys.argv[2]
random.seed(seed)
kind=random.choice(["gemm","reduce","cumsum"])
if kind=="gemm":
    dt=random.choice(["float16","bfloat16","float32","float8_e4m3fn"])
    ta=random.random()<0.3; tb=random.random()<0.5
    bm=random.choice([16,32,64]); bn=random.choice([16,32,64]); bk=random.choice([16,32])
    M=random.randint(1,150); N=random.randint(1,150); K=random.randint(1,130)
    stages=random.choice([0,1,2,3]); out=random.choice(["float32","float16"])
    ashape="(K, M)" if ta else "(M, K)"; bshape="(N, K)" if tb else "(K, N)"
    asm="(bk, bm)" if ta else "(bm, bk)"; bsm="(bn, bk)" if tb else "(bk, bn)"
    acopy="A[k * bk, by * bm]" if ta else "A[by * bm, k * bk]"
    bcopy="B[bx * bn, k * bk]" if tb else "B[k * bk, bx * bn]"
    src=f'''import tilelang.language as T

def k(M={M}, N={N}, K={K}, bm={bm}, bn={bn}, bk={bk}):
    @T.prim_func
    def main(A: T.Tensor({ashape}, "{dt}"), B: T.Tensor({bshape}, "{dt}"), C: T.Tensor((M, N), "{out}")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            As = T.alloc_shared({asm}, "{dt}")
            Bs = T.alloc_shared({bsm}, "{dt}")
            Cl = T.alloc_fragment((bm, bn), "float32")
            T.clear(Cl)
            for k in T.Pipelined(T.ceildiv(K, bk), num_stages={stages}):
                T.copy({acopy}, As)
                T.copy({bcopy}, Bs)
                T.gemm(As, Bs, Cl, transpose_A={ta}, transpose_B={tb})
            T.copy(Cl, C[by * bm, bx * bn])
    return main
'''
elif kind=="reduce":
    op=random.choice(["sum","max","min","abssum","absmax"]); dim=random.choice([0,1,-1])
    dt=random.choice(["float32","float16"]); clear=random.choice([True,False])
    bm=random.choice([4,8,16]); bn=random.choice([16,32,64]); M=random.randint(1,60); N=bn
    clear_arg="" if op=="abssum" else f", clear={clear}"  # TileLang's reduce_abssum has no clear
    rshape="(bn,)" if dim==0 else "(bm,)"; oshape="(T.ceildiv(M, bm), bn)" if dim==0 else "(M,)"
    store="O[by, j]" if dim==0 else "O[by * bm + j]"
    ext="bn" if dim==0 else "bm"
    src=f'''import tilelang.language as T

def k(M={M}, N={N}, bm={bm}, bn={bn}):
    @T.prim_func
    def main(A: T.Tensor((M, N), "{dt}"), O: T.Tensor({oshape}, "float32")):
        with T.Kernel(T.ceildiv(M, bm), threads=64) as by:
            X = T.alloc_fragment((bm, bn), "float32")
            R = T.alloc_fragment({rshape}, "float32")
            T.copy(A[by * bm, 0], X)
            T.fill(R, 0.5)
            T.reduce_{op}(X, R, dim={dim}{clear_arg})
            for j in T.Parallel({ext}):
                {store} = R[j]
    return main
'''
else:
    dim=random.choice([0,1]); rev=random.choice([True,False]); bm=random.choice([4,8,16]); bn=random.choice([16,32,64])
    M=random.randint(1,60); N=bn
    src=f'''import tilelang.language as T

def k(M={M}, N={N}, bm={bm}, bn={bn}):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), O: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(M, bm), threads=64) as by:
            X = T.alloc_shared((bm, bn), "float32")
            Y = T.alloc_shared((bm, bn), "float32")
            T.copy(A[by * bm, 0], X)
            T.cumsum(X, Y, dim={dim}, reverse={rev})
            T.copy(Y, O[by * bm, 0])
    return main
'''
open(f"{outdir}/t{seed}.py","w").write(src)

#!/bin/sh
# The metal target without a Mac (docs/metal.md): every line of tests/e2e/examples.list runs on
# the emulator (backend emu: the generated MSL built by the host C++ compiler and run on the
# CPU) in both configurations, Metal 3 (--target metal) and Metal 4 (metal,metal4=1), and is
# verified against the reference interpreter; then source tests on the generated MSL: qualifiers,
# 128-bit copies, threadgroup memory, the GEMM path and its reasons (--explain), the MSL version
# rules for bfloat16, option errors. About 40 s on 2 cores (plain build).
T=${TILEC:-build/tilec}
if ! command -v "${TILEC_EMU_CXX:-c++}" >/dev/null 2>&1; then
  echo "metal: no C++ compiler (${TILEC_EMU_CXX:-c++}): the emulator cannot run, nothing checked"
  exit 0
fi
J=$(nproc 2>/dev/null || echo 2)

# Metal has 32 KB of threadgroup memory: gemm_transposed's default 128 x 128 float32 C_shared
# (64 KB) is refused (an error naming the buffer), so it runs here with 64 x 64 blocks.
case_sh='
T=$1; tgt=$2; line=$3
file=${line%% *}; args=${line#"$file"}
[ "$file" = gemm_transposed.py ] && args="$args -D block_M=64 -D block_N=64"
# shellcheck disable=SC2086
out=$(timeout 300 "$T" run "examples/$file" $args --target "$tgt" --verify 2>&1); rc=$?
if [ $rc -eq 0 ]; then printf "PASS metal run %s %s\n" "$tgt" "$line"
else printf "FAIL metal run %s %s (exit %s)\n%s\n" "$tgt" "$line" "$rc" "$(echo "$out" | tail -n 8 | sed "s/^/    /")"; fi'
for tgt in metal metal,metal4=1; do
  { grep -v -e '^#' -e '^$' tests/e2e/examples.list | sed 's/[[:space:]]*$//'
    # non-square block tiles on the simdgroup path; bfloat16 both ways (MSL 3.0: 16-bit storage)
    echo "gemm.py -D M=200 -D N=136 -D K=96 -D block_M=64 -D block_N=128"
    echo "gemm.py -D M=96 -D N=96 -D K=64 -D block_M=32 -D block_N=96 -D block_K=32"
    echo "cross_entropy.py -D M=16 -D V=256 -D dtype=bfloat16"
  } | xargs -P "$J" -d '\n' -I{} sh -c "$case_sh" _ "$T" "$tgt" {}
done
out=$("$T" run examples/cross_entropy.py -D M=16 -D V=256 -D dtype=bfloat16 --target metal,msl=3.0 --verify 2>&1)
if [ $? -eq 0 ]; then echo "PASS metal run msl=3.0 bfloat16 (software conversions)"
else echo "FAIL metal run msl=3.0 bfloat16"; echo "$out" | tail -n 5; fi

# ---- source tests ----
check() { # NAME, then the condition's exit status in $?
  if [ "$2" -eq 0 ]; then echo "PASS metal source $1"; else echo "FAIL metal source $1"; fi
}
src() { "$T" source "$@" 2>&1; }

g=$(src examples/gemm.py --target metal --kernel-only)
echo "$g" | grep -q '^\[\[kernel, max_total_threads_per_threadgroup(128)\]\] void tilec_matmul($'; check "kernel attribute and name" $?
echo "$g" | grep -q 'const device half \*__restrict b0_A \[\[buffer(0)\]\]'; check "read-only tensor is const device __restrict" $?
echo "$g" | grep -q '    device half \*__restrict b2_C \[\[buffer(2)\]\]'; check "written tensor is device __restrict, not const" $?
echo "$g" | grep -q 'ushort tcg_lane \[\[thread_index_in_simdgroup\]\]'; check "lane from its attribute" $?
echo "$g" | grep -q '\*(threadgroup uint4 \*)(&b[0-9]*_A_shared\[.*\]) = \*(const device uint4 \*)'; check "128-bit copies into threadgroup memory" $?
echo "$g" | grep -q 'threadgroup_barrier(mem_flags::mem_threadgroup);'; check "threadgroup barriers" $?
echo "$g" | grep -q 'tcm_gemm_ss<128, 128, 32, 2, 2, false, false, half, half, float>('; check "gemm: simdgroup_matrix 128x128x32 over 2x2" $?
echo "$g" | grep -q 'threadgroup uint4 tcg_smem\[1024\];'; check "16 KB of threadgroup memory (no cp.async staging)" $?
echo "$g" | grep -q -e '__syncthreads' -e 'threadIdx' -e '__shfl' -e 'double'; [ $? -ne 0 ]; check "no CUDA spellings, no double" $?
f=$(src examples/gemm.py --target metal)
echo "$f" | grep -q 'simdgroup_multiply_accumulate(c\[i\]\[j\], a\[i\], b\[j\], c\[i\]\[j\])'; check "prelude: simdgroup_multiply_accumulate" $?
echo "$f" | grep -q 'simdgroup_load(raw, x, stride'; check "prelude: simdgroup_load" $?

fa=$(src examples/flash_attention.py --target metal --kernel-only)
echo "$fa" | grep -q 'tcm_gemm_rs<64, 64, 64, 4, 1, false, false, half, half, float>((&b[0-9]*_acc_s_cast'; check "attention: second gemm with A in registers" $?
echo "$fa" | grep -q 'simd_shuffle_xor('; check "row reductions by simd_shuffle_xor" $?

tg=$(src examples/gemm_transposed.py --target metal -D block_M=64 -D block_N=64 --kernel-only)
echo "$tg" | grep -q 'tcm_gemm_ss<64, 64, 64, 2, 2, false, true, bfloat, bfloat, float>('; check "gemm with B transposed, bfloat16 operands" $?

e=$(src examples/gemm.py --target metal --explain --kernel-only | head -n 1)
echo "$e" | grep -q '^// examples/gemm.py:[0-9]*:[0-9]*: T.gemm 128 x 128 x 32 (float16 x float16 -> float32, A in threadgroup memory): simdgroup_matrix 8x8 path over 2 x 2 simdgroups (64 x 64 per simdgroup, float accumulation); not matmul2d: metal4 is off (--target metal,metal4=1)$'
check "explain: Metal 3 takes the simdgroup path" $?
e=$(src examples/gemm.py --target metal,metal4=1 --explain --kernel-only | head -n 1)
echo "$e" | grep -q 'simdgroup_matrix 8x8 path over 2 x 2 simdgroups.*not matmul2d: the shape suits it, but the cooperative-tensor path is not implemented'
check "explain: metal4, a suitable shape, and why it still is the simdgroup path" $?
e=$(src examples/gemm.py --target metal,metal4=1 -D block_N=48 --explain --kernel-only | head -n 1)
echo "$e" | grep -q 'T.gemm 128 x 48 x 32 .*simdgroup_matrix 8x8 path over 4 x 1 simdgroups (32 x 48 per simdgroup.*not matmul2d: N = 48 is not a multiple of 32$'
check "explain: metal4, N % 32 != 0 takes the simdgroup path" $?
e=$(src examples/gemm.py --target metal,metal4=1 -D block_M=64 -D block_N=64 -D block_K=8 --explain --kernel-only | head -n 1)
echo "$e" | grep -q 'not matmul2d: K = 8 is not a multiple of 16$'; check "explain: metal4, K % 16 != 0" $?
e=$(src examples/softmax.py -D m=4 --target metal --explain --kernel-only | head -n 1)
[ "$e" = "// no T.gemm: no GEMM path to choose" ]; check "explain: a kernel without T.gemm" $?

b31=$(src examples/cross_entropy.py -D M=16 -D V=256 -D dtype=bfloat16 --target metal --kernel-only)
b30=$(src examples/cross_entropy.py -D M=16 -D V=256 -D dtype=bfloat16 --target metal,msl=3.0 --kernel-only)
echo "$b31" | grep -q 'const device bfloat \*__restrict'; check "MSL 3.1: bfloat16 is bfloat" $?
echo "$b30" | grep -q 'const device ushort \*__restrict' && ! echo "$b30" | grep -qw 'bfloat'; check "MSL 3.0: bfloat16 is 16-bit storage, no bfloat" $?
m=$(src examples/gemm.py --target metal,msl=3.1,metal4=1)
[ $? -eq 2 ] && echo "$m" | grep -q 'metal4=1 needs MSL 4.0 (msl=3.1 given)'; check "metal4=1 with msl=3.1 is a usage error" $?
m=$(src examples/gemm.py --target metal,msl=2.4)
[ $? -eq 2 ] && echo "$m" | grep -q "unknown MSL version '2.4'"; check "unknown MSL version is a usage error" $?
m=$("$T" run examples/gemm_transposed.py --target metal 2>&1)
[ $? -eq 1 ] && echo "$m" | grep -q "more than metal allows (32768)"; check "threadgroup memory over 32 KB is a program error" $?
"$T" backends | grep -q '^metal   emu       yes      yes'; check "tilec backends: emu is the default off macOS" $?

#!/bin/sh
# TileLang constructs that the compatibility run (tests/compat) needed, each read and run on the
# cpu with --verify against the reference interpreter (tests/e2e/data/compat/*.py).
T=${TILEC:-build/tilec}
D=$(mktemp -d /tmp/tilec-e2e-compat-XXXXXX)
trap 'rm -rf "$D"' EXIT
export TILEC_CACHE_DIR="$D/cache"
S=tests/e2e/data/compat
check() { # name file args...
  name=$1 f=$2
  shift 2
  if "$T" run "$S/$f" --verify "$@" >"$D/out" 2>"$D/err"; then echo "PASS compat: $name"
  else echo "FAIL compat: $name (exit $?)"; head -n 8 "$D/err" "$D/out"; fi
}
check "slice extent through LET values" slice_let_extent.py -D H=128 -D D=16 -D padded_H=64 -D H_per_block=64 -D REPLICATE_H=1
check "a factory whose prim_func a nested helper defines; register and T.Parallel hints" nested_factory_hints.py -D M=64 -D N=32
check "torch.cuda.get_device_name" device_name.py -D N=64
if [ "$("$T" ir "$S/nested_factory_hints.py" --list | tr '\n' ' ')" = "scale_rows " ]; then echo "PASS compat: an undecorated driver with a nested prim_func is no kernel"
else echo "FAIL compat: ir --list of nested_factory_hints.py:"; "$T" ir "$S/nested_factory_hints.py" --list; fi
check "T.atomic_add(..., use_tma=True)" atomic_add_use_tma.py -D M=64 -D N=32 -D block_M=16
check "iket ranges, marks and payloads" iket_events.py -D n=300
check "T.fill on one element" fill_element.py -D N=16
check "T.reinterpret and tvm.tirx helpers" reinterpret_bits.py --kernel bits -D N=64
check "T.reinterpret across widths (bfloat16, float64, float8, float32)" reinterpret_bits.py --kernel widths -D N=64
check "T.gemm with a one-row operand" gemm_one_row.py -D G=1 -D BS=32 -D BK=16
check "@autotune configurations with pass_configs" autotune_pass_configs.py -D M=64 -D N=16
if [ "$("$T" ir "$S/autotune_pass_configs.py" --list)" = "double" ]; then echo "PASS compat: ir --list evaluates no @autotune configuration"
else echo "FAIL compat: ir --list of autotune_pass_configs.py"; fi
check "buffer views: T.Tensor(.., X.data), T.reshape, T.view" buffer_views.py --save "$D/views"
if cmp -s "$D/views/B.npy" "$D/views/C.npy" && cmp -s "$D/views/R.npy" "$D/views/S.npy"; then echo "PASS compat: results through views equal the direct ones"
else echo "FAIL compat: results through views differ from the direct ones"; fi
check "T.im2col" im2col.py --save "$D/im2col"
if cmp -s "$D/im2col/Col.npy" "$D/im2col/Ref.npy"; then echo "PASS compat: T.im2col tiles equal the element-wise im2col matrix"
else echo "FAIL compat: T.im2col tiles differ from the element-wise im2col matrix"; fi
check "'while' on a runtime condition" runtime_while.py --save "$D/while"
if cmp -s "$D/while/B.npy" "$D/while/Ref.npy" && cmp -s "$D/while/Count.npy" "$D/while/CountRef.npy"; then echo "PASS compat: 'while' loops give the values computed without them"
else echo "FAIL compat: 'while' loops differ from the values computed without them"; fi
check "GemmWarpPolicy imported from tilelang.tileop.base" policy_import.py
if "$T" ir "$S/policy_import.py" | grep -q "policy=T.GemmWarpPolicy.FullRow)"; then echo "PASS compat: the imported GemmWarpPolicy.FullRow reaches T.gemm"
else echo "FAIL compat: the imported GemmWarpPolicy.FullRow does not reach T.gemm"; fi
check "T.parallel(start, stop)" tir_parallel.py --save "$D/tirpar"
if cmp -s "$D/tirpar/B.npy" "$D/tirpar/Ref.npy"; then echo "PASS compat: T.parallel loops give the T.Parallel values"
else echo "FAIL compat: T.parallel loops differ from the T.Parallel values"; fi
check "torch.cuda.get_device_properties and tilelang.DataType" device_properties.py -D N=64
if "$T" ir "$S/device_properties.py" -D N=64 | grep -q "B\[i\] = A\[i\] + 25.0"; then echo "PASS compat: device properties and DataType fold at compile time"
else echo "FAIL compat: device properties and DataType do not fold as expected"; fi
check "T.atomic_addx4 and T.atomic_addx2" atomic_addx4.py --save "$D/addx4"
if cmp -s "$D/addx4/B.npy" "$D/addx4/Ref.npy"; then echo "PASS compat: vector atomic adds add every element once"
else echo "FAIL compat: vector atomic adds differ from 2 * A"; fi
check "T.Persistent" persistent.py --save "$D/persistent"
if cmp -s "$D/persistent/B.npy" "$D/persistent/Ref.npy" &&
   "$T" ir "$S/persistent.py" | grep -q "for w in serial(0, 6):" &&
   "$T" ir "$S/persistent.py" | grep -q "if w \* 7 + block_id < 36 and (w \* 7 + block_id) // 2 // 6 \* 2 + (w \* 7 + block_id) % 2 < 5:"
then echo "PASS compat: T.Persistent visits every tile in TileLang's wave order"
else echo "FAIL compat: T.Persistent"; fi
check "several 'with T.Kernel' blocks: two_blocks" multi_kernel.py --kernel two_blocks --save "$D/mk2"
check "several 'with T.Kernel' blocks: one_block" multi_kernel.py --kernel one_block --save "$D/mk1"
if cmp -s "$D/mk2/B.npy" "$D/mk1/B.npy" && cmp -s "$D/mk2/D.npy" "$D/mk1/D.npy" &&
   "$T" ir "$S/multi_kernel.py" --kernel two_blocks | grep -q "with T.Kernel(4, 3, threads=32) as (bx, by):"
then echo "PASS compat: independent T.Kernel blocks run as one launch, each on its own grid"
else echo "FAIL compat: independent T.Kernel blocks differ from one block computing the same"; fi
check "dependent T.Kernel blocks: split_combine" multi_launch.py --kernel split_combine --save "$D/ml3"
check "dependent T.Kernel blocks: direct" multi_launch.py --kernel direct --save "$D/ml1"
if cmp -s "$D/ml3/Partial.npy" "$D/ml1/Partial.npy" && cmp -s "$D/ml3/Out.npy" "$D/ml1/Out.npy" &&
   cmp -s "$D/ml3/Scaled.npy" "$D/ml1/Scaled.npy" &&
   "$T" ir "$S/multi_launch.py" --kernel split_combine | grep -q "# launched 3 times, one launch after another"
then echo "PASS compat: dependent T.Kernel blocks run as launches one after another"
else echo "FAIL compat: dependent T.Kernel blocks differ from one block computing the same"; fi
check "dependent T.Kernel blocks of a @tilelang.jit kernel that annotates its tensors in its body" jit_launches.py --kernel reverse_twice --save "$D/jl"
check "T.sync_grid in a @tilelang.jit kernel that annotates its tensors in its body" jit_launches.py --kernel reverse_sync --save "$D/jls"
if cmp -s "$D/jl/Out.npy" "$D/jl/Ref.npy" && cmp -s "$D/jls/Out.npy" "$D/jls/Ref.npy" &&
   "$T" ir "$S/jit_launches.py" --kernel reverse_twice | grep -q "# launched 2 times, one launch after another"
then echo "PASS compat: body-annotated tensors make dependent T.Kernel blocks launches of their own"
else echo "FAIL compat: dependent T.Kernel blocks of a body-annotated @tilelang.jit kernel share a launch"; fi
check "T.sync_grid" multi_launch.py --kernel grid_sync --save "$D/mlg"
if cmp -s "$D/mlg/Partial.npy" "$D/ml1/Partial.npy" && cmp -s "$D/mlg/Out.npy" "$D/ml1/Out.npy" &&
   cmp -s "$D/mlg/Scaled.npy" "$D/ml1/Scaled.npy"
then echo "PASS compat: T.sync_grid starts the next launch"
else echo "FAIL compat: T.sync_grid differs from one block computing the same"; fi
check "T.Kernel blocks with runtime locals of the same names" multi_launch.py --kernel split_combine_locals --save "$D/mll"
if cmp -s "$D/mll/Partial.npy" "$D/ml1/Partial.npy" && cmp -s "$D/mll/Out.npy" "$D/ml1/Out.npy" &&
   cmp -s "$D/mll/Scaled.npy" "$D/ml1/Scaled.npy"
then echo "PASS compat: each T.Kernel block's runtime locals are its own"
else echo "FAIL compat: T.Kernel blocks with runtime locals of the same names differ from direct"; fi
check "T.alloc_global workspaces" multi_launch.py --kernel workspace --save "$D/mlw"
if cmp -s "$D/mlw/Partial.npy" "$D/ml1/Partial.npy" && cmp -s "$D/mlw/Out.npy" "$D/ml1/Out.npy" &&
   cmp -s "$D/mlw/Scaled.npy" "$D/ml1/Scaled.npy" &&
   "$T" ir "$S/multi_launch.py" --kernel workspace | grep -q "^  workspace W: float32\[8, 4\] (allocated for each launch, zeroed)$" &&
   "$T" ir "$S/multi_launch.py" --kernel workspace | grep -q "# launched 3 times, one launch after another"
then echo "PASS compat: T.alloc_global workspaces outlive a launch and start zeroed"
else echo "FAIL compat: T.alloc_global workspaces differ from direct"; fi
check "T.rng_init / T.rng_rand per thread" rng.py --kernel per_thread --save "$D/rng4"
check "T.rng_init / T.rng_rand in a one-thread T.Parallel loop" rng.py --kernel one_thread --save "$D/rng1"
if cmp -s "$D/rng4/Out.npy" "$D/rng1/Out.npy" && cmp -s "$D/rng1/First.npy" "$D/rng1/Ref.npy"
then echo "PASS compat: T.rng_rand draws cuRAND's Philox4_32_10 stream (Random123's known answer)"
else echo "FAIL compat: T.rng_rand's numbers differ from the Philox4_32_10 stream"; fi
check "T.atomic_add(..., return_prev=True)" atomic_prev.py --save "$D/aprev"
if cmp -s "$D/aprev/Hist.npy" "$D/aprev/Ref.npy" &&
   "$T" ir "$S/atomic_prev.py" | grep -q "\] = T.atomic_add(G\[0\], 1, return_prev=True)$"
then echo "PASS compat: return_prev gives each thread the count before its own addition"
else echo "FAIL compat: T.atomic_add(..., return_prev=True)"; fi
check "T.sync_threads(id, count) under 'if tx < count'" named_barrier.py --save "$D/nbar"
if cmp -s "$D/nbar/Out.npy" "$D/nbar/Ref.npy" && [ "$("$T" ir "$S/named_barrier.py" | grep -c "^      if tx < 32:$")" = 2 ]
then echo "PASS compat: a named barrier's condition moves below it; the scan gives T.cumsum's sums"
else echo "FAIL compat: T.sync_threads(id, count)"; fi
check "'break' under a runtime condition" runtime_break.py --save "$D/rtbrk"
if cmp -s "$D/rtbrk/B.npy" "$D/rtbrk/Ref.npy" && cmp -s "$D/rtbrk/Count.npy" "$D/rtbrk/CountRef.npy" &&
   "$T" ir "$S/runtime_break.py" | grep -q "^      if broke\[0\] == 0:$"
then echo "PASS compat: a runtime 'break' stops the loop where the flag written by hand does"
else echo "FAIL compat: 'break' under a runtime condition"; fi
check "T.wgmma_gemm, T.wait_wgmma, T.ptx_commit_group, T.ptx_wait_group, T.tfloat32" hopper_async.py --save "$D/hopper"
if cmp -s "$D/hopper/C.npy" "$D/hopper/Ref.npy" && "$T" ir "$S/hopper_async.py" | grep -q "wg_wait=-1" &&
   "$T" ir "$S/hopper_async.py" | grep -q "X: float32\[32, 32\]"
then echo "PASS compat: the async Hopper forms compute what T.gemm does; T.tfloat32 is float32 storage"
else echo "FAIL compat: the async Hopper forms differ from T.gemm"; fi
check "T.alloc_reducer, T.reducer_init, T.reducer_update, T.finalize_reducer" reducer.py --save "$D/reducer"
if cmp -s "$D/reducer/Sum.npy" "$D/reducer/RefSum.npy" && cmp -s "$D/reducer/MaxRow.npy" "$D/reducer/RefMax.npy" &&
   cmp -s "$D/reducer/MinRow.npy" "$D/reducer/RefMin.npy"
then echo "PASS compat: reducers give the T.reduce_sum / reduce_max / reduce_min results"
else echo "FAIL compat: reducers differ from T.reduce_*"; fi
check "T.attr, T.comm_reducer, T.tvm_thread_allreduce" thread_allreduce.py --save "$D/allreduce"
if cmp -s "$D/allreduce/C.npy" "$D/allreduce/Ref.npy" && cmp -s "$D/allreduce/Mx.npy" "$D/allreduce/RefMx.npy"
then echo "PASS compat: thread all-reduces give the folds written by hand"
else echo "FAIL compat: thread all-reduces differ from the folds written by hand"; fi
check "a list-valued parameter from -D NAME=[a,b]" list_define.py -D "sizes=[16,32]" --save "$D/listdef"
if cmp -s "$D/listdef/B.npy" "$D/listdef/Ref.npy" &&
   "$T" ir "$S/list_define.py" -D "sizes=(16, 32, 8)" | grep -q "A: float32\[56, 8\]"
then echo "PASS compat: -D lists and tuples bind list-valued parameters"
else echo "FAIL compat: -D lists and tuples"; fi
check "@autotune configurations tilec cannot evaluate" autotune_class.py -D M=64
if "$T" ir "$S/autotune_class.py" -D M=64 2>&1 >/dev/null | grep -q "note: @autotune's configurations are not used"
then echo "PASS compat: @autotune configurations that fail to evaluate are a note"
else echo "FAIL compat: @autotune configurations that fail to evaluate"; fi
if "$T" run "$S/expr_dim.py" 2>&1 | grep -q "^tilec: error: dimension 0 of 'A' (n \* 4) needs the symbolic size 'n', which has no value; give its size with -D n=N$"; then
  echo "PASS compat: run names the -D a dimension computed from symbolic sizes needs"
else echo "FAIL compat: run's message for a dimension computed from symbolic sizes"; fi
# dimensions computed from symbolic sizes (a * b, T.ceildiv(a, 2)), sized by tilec_kernel_param_shape
check "a dimension computed from a symbolic size only it names (n * 4)" expr_dim.py -D n=3
check "dimensions computed from symbolic sizes (a * b, T.ceildiv(a, 2))" shape_expr.py -D a=5 -D b=3 --save "$D/shapeexpr"
if python3 -c "import sys, numpy as n; sys.exit(0 if n.load(sys.argv[1]).shape == (15, 16) and n.load(sys.argv[2]).shape == (3, 16) else 1)" \
     "$D/shapeexpr/X.npy" "$D/shapeexpr/Half.npy" 2>/dev/null
then echo "PASS compat: run sizes X as [a * b, 16] and Half as [ceildiv(a, 2), 16]"
else echo "FAIL compat: the sizes run gives dimensions computed from symbolic sizes"; fi
if "$T" verify "$S/shape_expr.py" -D a=4 -D b=2 >"$D/out" 2>&1; then echo "PASS compat: verify sizes dimensions computed from symbolic sizes"
else echo "FAIL compat: verify with dimensions computed from symbolic sizes"; head -n 8 "$D/out"; fi
check "from NAME import ... of a sibling file" sibling_import.py -D M=100 --save "$D/sibling"
if cmp -s "$D/sibling/B.npy" "$D/sibling/Ref.npy" && "$T" ir "$S/sibling_import.py" -D M=100 | grep -q "\* 2.0 + 3.0"
then echo "PASS compat: a sibling module's helpers run with its own globals"
else echo "FAIL compat: a sibling module's helpers"; fi
"$T" ir "$S/sibling_import.py" -D M=100 -D block=48 >/dev/null 2>"$D/err"
if grep -q "^$S/sibling_helpers.py:10:5: error: assertion failed: block must be one of (16, 32, 64), got 48" "$D/err"
then echo "PASS compat: an assertion in a sibling module points into that file"
else echo "FAIL compat: an assertion in a sibling module"; cat "$D/err"; fi
"$T" ir "$S/sibling_bad_name.py" >/dev/null 2>"$D/err"
if grep -q "^$S/sibling_bad_name.py:4:38: error: cannot import name 'not_there' from 'sibling_helpers' ($S/sibling_helpers.py)" "$D/err"
then echo "PASS compat: a name the sibling module lacks is an error at the import"
else echo "FAIL compat: a name the sibling module lacks"; cat "$D/err"; fi
# a sibling package (sibling_pkg/__init__.py re-exporting its modules' names with relative
# imports; TileLang's dequantize_gemm examples import `from quantize import ...`)
check "from NAME import ... of a sibling package" sibling_package.py -D N=128 --save "$D/pkg"
if cmp -s "$D/pkg/B.npy" "$D/pkg/Ref.npy"; then echo "PASS compat: a sibling package's helpers give the values computed without them"
else echo "FAIL compat: a sibling package's helpers differ from the values computed without them"; fi
check "T.shift_left / T.shift_right" shift_ops.py -D N=64 --save "$D/shift"
if cmp -s "$D/shift/B.npy" "$D/shift/BRef.npy" && cmp -s "$D/shift/C.npy" "$D/shift/CRef.npy"
then echo "PASS compat: T.shift_left / T.shift_right give what << and >> give"
else echo "FAIL compat: T.shift_left / T.shift_right differ from << and >>"; fi
if cmp -s "$D/shift/U.npy" "$D/shift/URef.npy" && cmp -s "$D/shift/V.npy" "$D/shift/VRef.npy" &&
   python3 -c "import sys, numpy as n; s = n.load(sys.argv[1]) % 8 + 4; sys.exit(0 if (s >= 8).any() else 1)" "$D/shift/S.npy" 2>/dev/null
then echo "PASS compat: 8-bit shifts by 8 and more give the 32-bit promoted results"
else echo "FAIL compat: 8-bit shifts by counts past 8 (or no such count drawn)"; fi
check "tvm.target.Target and target_is_gfx950" target_query.py -D N=64 --save "$D/target"
if cmp -s "$D/target/B.npy" "$D/target/Ref.npy"; then echo "PASS compat: target_is_gfx950 tells a gfx950 target from the others"
else echo "FAIL compat: target_is_gfx950's answers"; fi
# an 'if' on the thread index whose branches hold tile operations: warp-specialized branches
check "tile operations in the branches of an 'if' on the thread index" thread_branches.py -D M=16 -D N=32 --save "$D/branches"
if cmp -s "$D/branches/S.npy" "$D/branches/SRef.npy" && cmp -s "$D/branches/B.npy" "$D/branches/BRef.npy"
then echo "PASS compat: warp-specialized branches give the values computed without the 'if'"
else echo "FAIL compat: warp-specialized branches differ from the values computed without the 'if'"; fi
# a producer and a consumer branch whose loops run side by side through a ring of two stages
check "a producer's and a consumer's loops interleaved" producer_consumer.py -D M=16 -D K=192 --save "$D/pc"
if cmp -s "$D/pc/S.npy" "$D/pc/SRef.npy"; then echo "PASS compat: interleaved producer and consumer give the values computed without branches"
else echo "FAIL compat: interleaved producer and consumer differ from the values computed without branches"; fi
# slots handed out by T.atomic_add(..., return_prev=True): the order within a row is the schedule's
check "slots from return_prev atomics, compared as multisets" atomic_slots.py -D R=4 -D N=256
if grep -q "^verify Idx: ok .*compared as multisets along dimension 1)" "$D/out" && grep -q "^verify Count: ok .*rtol=0)$" "$D/out"
then echo "PASS compat: the slot list is compared as multisets along dimension 1, its count exactly"
else echo "FAIL compat: the slot list's comparison"; cat "$D/out"; fi
if "$T" run "$S/atomic_slots.py" -D R=4 -D N=256 --verify --json | grep -q '"name": "Idx", .*"unordered_dims": \[1\]}, {"name": "Count", .*"unordered_dims": \[\]}'
then echo "PASS compat: --json names the unordered dimensions"
else echo "FAIL compat: --json unordered_dims"; fi
# pass_configs TL_DISABLE_THREAD_STORAGE_SYNC, given as a module-level dict: the program's own barriers
check "TL_DISABLE_THREAD_STORAGE_SYNC" storage_sync_off.py -D N=256 --save "$D/sync"
if cmp -s "$D/sync/B.npy" "$D/sync/Ref.npy"; then echo "PASS compat: with storage sync off, the program's own barriers give the direct result"
else echo "FAIL compat: with storage sync off, the result differs from the direct one"; fi
# T.tvm_warp_shuffle (a shared scratch row between two barriers) and make_mma_swizzle_layout
check "T.tvm_warp_shuffle and make_mma_swizzle_layout" warp_shuffle.py --save "$D/shfl"
if cmp -s "$D/shfl/B.npy" "$D/shfl/BRef.npy" && cmp -s "$D/shfl/C.npy" "$D/shfl/CRef.npy" && cmp -s "$D/shfl/D.npy" "$D/shfl/X.npy"
then echo "PASS compat: shuffled values equal the source lanes' inputs; the MMA swizzle keeps values"
else echo "FAIL compat: shuffled values or the MMA swizzle"; fi
"$T" ir "$S/sibling_package_missing.py" >/dev/null 2>"$D/err"
if grep -q "^$S/sibling_pkg/missing.py:2:1: error: no module named 'sibling_pkg.nothere' (looked for nothere.py beside $S/sibling_pkg/missing.py)" "$D/err"
then echo "PASS compat: a relative import of a module the package lacks is an error in the package's file"
else echo "FAIL compat: a relative import of a module the package lacks"; cat "$D/err"; fi

#!/bin/sh
# tests/gpu/prepare_carry.sh TILELANG_CHECKOUT: the three ignored folders a device call for
# bench/corpus_peer.py carries (docs/gpu.md, "Waiting for a GPU"), made here where pip and the
# network work:
#   .peer/  TileLang's wheels bundled for the GPU machine (../shared/tools/tilelang_peer.sh)
#   .tlex/  a copy of TileLang's examples/ (the corpus and its helper modules)
#   .whl/   wheels the examples import that the GPU image lacks (einops, flash-linear-attention)
# Each is listed in .git/info/exclude. About 52 MB together, under the 64 MB a call carries.
set -eu
[ $# -eq 1 ] && [ -d "$1/examples" ] || { echo "usage: tests/gpu/prepare_carry.sh TILELANG_CHECKOUT" >&2; exit 2; }
for d in .peer .tlex .whl; do grep -qx "/$d/" .git/info/exclude 2>/dev/null || echo "/$d/" >>.git/info/exclude; done
[ -f .peer/tilelang-site.tar.xz ] || sh ../shared/tools/tilelang_peer.sh
rm -rf .tlex && cp -r "$1/examples" .tlex
mkdir -p .whl
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux2014_x86_64 -d .whl \
  einops flash-linear-attention fla-core
du -sh .peer .tlex .whl

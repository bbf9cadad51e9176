#!/bin/sh
# TileLang's own examples as the acceptance corpus: tests/compat/run.sh TILELANG_CHECKOUT [options]
# (options: --no-verify, --static, --jobs N, --details FILE, --only TEXT, --target T, --backend B; TILEC names the
# CLI, default build/tilec).
# Get a checkout with `git clone https://github.com/tile-ai/tilelang` (never commit it here).
# Exit status 1 when any kernel crashes tilec. See tests/compat/compat.py and docs/testing.md.
[ $# -ge 1 ] || { echo "usage: tests/compat/run.sh TILELANG_CHECKOUT [--no-verify] [--static] [--jobs N] [--details FILE]" >&2; exit 2; }
here=$(dirname "$0")
exec python3 "$here/compat.py" --tilec "${TILEC:-build/tilec}" "$@"

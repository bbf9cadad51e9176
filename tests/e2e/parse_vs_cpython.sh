#!/bin/sh
# The parser against CPython's own: the tree of every example, every sample file and of the first Python
# standard library modules found on this machine must equal CPython's ast (needs python3;
# without it the check is reported as skipped).
B="${TILEC_BUILD:-build}"
dump="$B/tests/helpers/ast_dump"
if [ ! -x "$dump" ]; then
  echo "FAIL parse vs cpython: $dump not built (make $dump)"
  exit 1
fi
if ! command -v python3 >/dev/null 2>&1; then
  echo "SKIP parse vs cpython: python3 not installed"
  exit 0
fi
here=$(dirname "$0")
stdlib=$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["stdlib"])' 2>/dev/null)
# shellcheck disable=SC2046
python3 "$here/parse_vs_cpython.py" "$dump" "$here"/../fuzz/corpus/*.py $(ls "$here"/../../examples/*.py 2>/dev/null) \
  $(ls "$stdlib"/*.py 2>/dev/null | head -n 60)

"""python -m tilec.as_tilelang SCRIPT.py [args...] | -m MODULE [args...]: run a TileLang program
with tilec as the engine. What tilec cannot honour ends the run with one message naming the API
and the script line (exit status 1)."""
import os
import runpy
import sys

USAGE = ("usage: python -m tilec.as_tilelang SCRIPT.py [args...]\n"
         "       python -m tilec.as_tilelang -m MODULE [args...]   (e.g. -m pytest tests/)\n"
         "environment: TILEC_AS_TILELANG_TARGET (cpu, cuda, metal: the target of every kernel),\n"
         "             TILEC_AS_TILELANG_BACKEND (e.g. emu), TILEC_AS_TILELANG_DUMP=DIR (keep the programs)\n")


def _user_line(tb):
    """'file:line' of the innermost frame of the user's code in a traceback, or ''."""
    from ._errors import _outside, _rel

    where = ""
    while tb is not None:
        if _outside(tb.tb_frame.f_code.co_filename):
            where = f"{_rel(tb.tb_frame.f_code.co_filename)}:{tb.tb_lineno}"
        tb = tb.tb_next
    return where


def main(argv):
    if not argv or argv[0] in ("-h", "--help"):
        sys.stdout.write(USAGE) if argv else sys.stderr.write(USAGE)
        return 0 if argv else 2
    from . import install
    from ._errors import CompatError
    from tilec.errors import TilecError

    install()
    try:
        if argv[0] == "-m":
            if len(argv) < 2:
                sys.stderr.write(USAGE)
                return 2
            sys.argv = [argv[1]] + argv[2:]
            sys.path[0] = os.getcwd()
            runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
        else:
            script = argv[0]
            if not os.path.isfile(script):
                print(f"tilec.as_tilelang: error: no such script: {script}", file=sys.stderr)
                return 2
            sys.argv = list(argv)
            sys.path[0] = os.path.dirname(os.path.abspath(script))
            runpy.run_path(script, run_name="__main__")
    except (CompatError, TilecError) as e:
        sys.stdout.flush()
        text = str(e)
        if isinstance(e, TilecError) and not e.file:  # a call's error (sizes, dtypes, devices): at the line
            where = _user_line(e.__traceback__)
            if where:
                text = f"{where}: {text}"
        print(text, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

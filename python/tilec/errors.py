"""Exceptions carrying tilec's diagnostics (the C API's tilec_error)."""


class TilecError(Exception):
    """A tilec failure. `str(e)` is the diagnostic as the CLI prints it (file:line:col: error:
    message, the source line and a caret, when it is about a place in a program)."""

    status = 0
    status_name = "error"

    def __init__(self, message, file="", line=0, col=0, rendered=None):
        self.message = message
        self.file, self.line, self.col = file, line, col
        self.rendered = (rendered or f"error: {message}\n").rstrip("\n")
        super().__init__(self.rendered)


class ProgramError(TilecError):
    """The TileLang program is wrong (has file, line and col)."""

    status, status_name = 1, "program"


class UsageError(TilecError, ValueError):
    """Bad arguments: wrong shapes, dtypes, devices, unknown bindings or options."""

    status, status_name = 2, "usage"


class VerifyError(TilecError):
    """Results are out of tolerance against the reference."""

    status, status_name = 3, "verify"


class TargetError(TilecError, RuntimeError):
    """Target or backend unavailable, toolchain or runtime failure."""

    status, status_name = 4, "target"


class InternalError(TilecError, RuntimeError):
    status, status_name = 7, "internal"


_BY_STATUS = {1: ProgramError, 2: UsageError, 3: VerifyError, 4: TargetError, 5: MemoryError, 6: OSError,
              7: InternalError}


def from_c(err):
    """The exception for a filled tilec_error."""
    msg = err.message.decode(errors="replace")
    rendered = err.rendered.decode(errors="replace")
    cls = _BY_STATUS.get(err.status, TilecError)
    if cls is MemoryError:
        return MemoryError(rendered.strip() or msg)
    if cls is OSError:
        e = TilecError(msg, err.file.decode(errors="replace"), err.line, err.col, rendered)
        e.status, e.status_name = 6, "io"
        return e
    return cls(msg, err.file.decode(errors="replace"), err.line, err.col, rendered)


class TilecWarning(UserWarning):
    """Something tilec compiled but doubts: a kernel that reads on-chip memory before anything
    writes it, or a kernel cache entry it had to rebuild. The message is the CLI's (file:line:col:
    warning: message, the source line and a caret)."""

# A sibling package (a folder with __init__.py beside the program), as TileLang's
# dequantize_gemm/quantize is: the program imports `from sibling_pkg import ...`, and this
# module re-exports names of its own modules with relative imports.
from .bits import unpack_unsigned  # noqa: F401
from .scales import SCALE, scaled  # noqa: F401
from .missing import not_there  # noqa: F401  (missing.py imports from a module the package lacks)

# Imports from a module sibling_pkg does not have: sibling_package_missing.py expects the error.
from .nothere import not_there  # noqa: F401

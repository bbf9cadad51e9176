"""tilelang.cache: tilec's disk kernel cache stands in for TileLang's."""
from . import clear_cache, disable_cache, enable_cache, is_cache_enabled  # noqa: F401
from .._errors import missing_attr


def __getattr__(name):
    missing_attr("tilelang.cache", name)

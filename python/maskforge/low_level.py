"""Lower-level controls. This module may change between minor versions.

The process-wide executable cache is separate from the caches each :class:`maskforge.Compiler`
owns; these functions inspect and empty it.
"""

from __future__ import annotations

from typing import Dict

from . import _native

__all__ = ["executable_cache_stats", "clear_executable_cache"]


def executable_cache_stats() -> Dict[str, int]:
    """Counters of the process-wide executable cache (the ``trie_*`` counters are zero)."""
    return _native.executable_cache_stats()


def clear_executable_cache() -> None:
    """Empties the process-wide executable cache."""
    _native.clear_executable_cache()

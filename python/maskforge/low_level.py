"""Lower-level controls. This module may change between minor versions.

The process-wide executable cache is separate from the caches each :class:`maskforge.Compiler`
owns. The ``compile_*_with_vocabulary`` helpers compile through it, so that code holding no
compiler (a request handler, a worker) still compiles each schema once per process; the other
functions inspect and empty it.
"""

from __future__ import annotations

from typing import Any, Dict

from . import _native

__all__ = [
    "compile_json_schema_with_vocabulary",
    "compile_type_with_vocabulary",
    "executable_cache_stats",
    "clear_executable_cache",
]


def compile_json_schema_with_vocabulary(
    schema: Any, vocabulary: _native.Vocabulary, **options: Any
) -> _native.BoundSchema:
    """Compiles ``schema`` (JSON text, a dict or a bool) through the process-wide executable
    cache and binds it to ``vocabulary``. ``options`` are :class:`maskforge.Compiler`'s keywords;
    the policies among them are part of the cache identity."""
    compiler = _native.process_cache_compiler(_native.Compiler(**options))
    return compiler.compile(schema).bind(vocabulary)


def compile_type_with_vocabulary(tp: Any, vocabulary: _native.Vocabulary, **options: Any) -> _native.BoundSchema:
    """Like :func:`compile_json_schema_with_vocabulary` for a Pydantic-compatible type (a
    ``BaseModel``, dataclass, ``TypedDict``, ...), through its JSON Schema."""
    compiler = _native.process_cache_compiler(_native.Compiler(**options))
    return compiler.compile(tp).bind(vocabulary)


def executable_cache_stats() -> Dict[str, int]:
    """Counters of the process-wide executable cache (the ``trie_*`` counters are zero)."""
    return _native.executable_cache_stats()


def clear_executable_cache() -> None:
    """Empties the process-wide executable cache."""
    _native.clear_executable_cache()

"""MaskForge: JSON Schema to exact allowed-token bitmasks for constrained LLM decoding.

Typical use::

    vocabulary = maskforge.Vocabulary.from_tokenizer_json("tokenizer.json")
    compiler = maskforge.Compiler()
    bound = compiler.compile(schema).bind(vocabulary)
    session = bound.start_session()
    mask = bytearray(bound.mask_byte_count)
    session.write_mask(mask)      # token i allowed <=> bit i % 32 of little-endian word i // 32
    session.advance(token_id)

Every object but the session is immutable and can be shared across threads.
"""

from . import errors as _errors
from ._native import BoundSchema, Compiler, SchemaProgram, Session, Vocabulary, __version__
from .errors import *  # noqa: F401,F403  (the exception hierarchy; its names are errors.__all__)

__all__ = ["__version__", "Vocabulary", "Compiler", "SchemaProgram", "BoundSchema", "Session", *_errors.__all__]

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

from ._native import BoundSchema, Compiler, SchemaProgram, Session, Vocabulary, __version__
from .errors import (
    ArgumentTypeError,
    GenerationTruncatedError,
    InternalError,
    InvalidArgumentError,
    MaskBufferError,
    MaskBufferTypeError,
    MaskForgeError,
    ReferenceResolutionError,
    ResourceLimitError,
    SchemaError,
    TokenRejectedError,
    UnsupportedGenerationModeError,
    UnsupportedOptionError,
    VocabularyError,
)

__all__ = [
    "__version__",
    "Vocabulary",
    "Compiler",
    "SchemaProgram",
    "BoundSchema",
    "Session",
    "MaskForgeError",
    "SchemaError",
    "ReferenceResolutionError",
    "ResourceLimitError",
    "VocabularyError",
    "TokenRejectedError",
    "MaskBufferError",
    "MaskBufferTypeError",
    "InvalidArgumentError",
    "ArgumentTypeError",
    "UnsupportedOptionError",
    "UnsupportedGenerationModeError",
    "GenerationTruncatedError",
    "InternalError",
]

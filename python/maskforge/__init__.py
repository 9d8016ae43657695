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

Generation with transformers (the ``transformers`` extra)::

    constrained = maskforge.from_transformers(model, tokenizer)
    generate = maskforge.Generator(constrained, Profile)   # a Pydantic model, a type or a schema
    profile = generate("Create a profile:", max_new_tokens=64)

Raw text instead of one JSON value: ``compiler.compile_regex(pattern)``,
``compiler.compile_choice(["yes", "no"])``, or ``maskforge.Regex(...)`` /
``maskforge.Choice(...)`` as a generation target; ``compiler.compile_json_object()`` is any
JSON object. Templates of parts (free text, triggered tags, JSON values...) and the tool-call
and reasoning formats: ``maskforge.templates`` (``Compiler.compile_template``).
"""

from . import errors as _errors
from ._native import (
    BoundSchema,
    Compiler,
    SchemaProgram,
    Session,
    Vocabulary,
    __version__,
    advance_batch,
    fill_masks,
    rollback_batch,
)
from .errors import *  # noqa: F401,F403  (the exception hierarchy; its names are errors.__all__)
from .forcing import TokenSplitter, forced_tokens
from .generation import Generator
from .hf import LogitsProcessor, TransformersModel, from_transformers
from . import templates
from .targets import Choice, Grammar, Regex
from .templates import Reasoning, Template, ToolCall, ToolCalls
from .tensors import allocate_token_bitmask, apply_token_bitmask_inplace

__all__ = [
    "__version__",
    "Vocabulary",
    "Compiler",
    "SchemaProgram",
    "BoundSchema",
    "Session",
    "fill_masks",
    "advance_batch",
    "rollback_batch",
    "forced_tokens",
    "TokenSplitter",
    "allocate_token_bitmask",
    "apply_token_bitmask_inplace",
    "from_transformers",
    "TransformersModel",
    "Generator",
    "LogitsProcessor",
    "Regex",
    "Choice",
    "Grammar",
    "Template",
    "ToolCall",
    "ToolCalls",
    "Reasoning",
    "templates",
    *_errors.__all__,
]

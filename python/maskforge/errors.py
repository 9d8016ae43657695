"""Exceptions raised by maskforge.

Every exception derives from :class:`MaskForgeError`. Errors about a bad argument also derive
from the matching builtin (``ValueError`` or ``TypeError``), so generic handlers keep working.
"""

from __future__ import annotations

from typing import Any, Dict, Optional, Sequence, Type

__all__ = [
    "MaskForgeError",
    "SchemaError",
    "ReferenceResolutionError",
    "ResourceLimitError",
    "VocabularyError",
    "TokenRejectedError",
    "RollbackError",
    "MaskBufferError",
    "MaskBufferTypeError",
    "InvalidArgumentError",
    "ArgumentTypeError",
    "UnsupportedGenerationModeError",
    "UnsupportedConstraintError",
    "GenerationTruncatedError",
    "ProgramLoadError",
    "InternalError",
]


class MaskForgeError(Exception):
    """Root of every maskforge exception."""


class SchemaError(MaskForgeError, ValueError):
    """A schema that cannot be compiled.

    Attributes:
        code: stable diagnostic code, e.g. ``"MF-E004"``.
        keyword: the keyword at fault, or ``None``.
        pointer: JSON Pointer of the schema location at fault (``""`` is the root).
        message: the diagnostic's message without code and location.
    """

    def __init__(self, message: str, *, code: str, keyword: Optional[str] = None, pointer: str = "") -> None:
        self.message = message
        self.code = code
        self.keyword = keyword
        self.pointer = pointer
        super().__init__(message)

    def __str__(self) -> str:
        where = self.pointer or "#"
        if self.keyword is not None:
            return f"{self.code} at {where} ({self.keyword}): {self.message}"
        return f"{self.code} at {where}: {self.message}"

    def __reduce__(self) -> Any:
        return _rebuild_schema_error, (type(self), self.message, self.code, self.keyword, self.pointer)


def _rebuild_schema_error(cls: Type[SchemaError], message: str, code: str, keyword: Optional[str], pointer: str) -> SchemaError:
    return cls(message, code=code, keyword=keyword, pointer=pointer)


class ReferenceResolutionError(SchemaError):
    """A ``$ref`` that cannot be resolved (``MF-E005``); the message names the URI."""


class ResourceLimitError(SchemaError):
    """A schema that exceeds a resource limit (``MF-E007``): size, states, nesting depth."""


class VocabularyError(MaskForgeError, ValueError):
    """A vocabulary that cannot be built: bad EOS ids, empty tokens, unreadable tokenizer files."""


class ProgramLoadError(MaskForgeError, ValueError):
    """Bytes that ``Compiler.load_program`` / ``SchemaProgram.from_bytes`` cannot load.

    Attributes:
        reason: ``"not_a_program"`` (not a program's bytes at all), ``"version"`` (written by
            another maskforge version: compile the schema again) or ``"damaged"`` (truncated or
            corrupted).
    """

    def __init__(self, message: str, *, reason: str = "damaged") -> None:
        self.reason = reason
        super().__init__(message)

    def __reduce__(self) -> Any:
        return _rebuild_program_load_error, (str(self), self.reason)


def _rebuild_program_load_error(message: str, reason: str) -> "ProgramLoadError":
    return ProgramLoadError(message, reason=reason)


class TokenRejectedError(MaskForgeError, ValueError):
    """A token the current mask forbids; the session is unchanged.

    Attributes:
        token_id: the id that was passed.
        reason: ``"out_of_range"``, ``"no_bytes"``, ``"leaves_language"``,
            ``"eos_not_accepting"`` or ``"session_finished"``.
        index: the token's position in the draft given to ``Session.advance_many``, or ``None``
            for ``Session.advance``.
    """

    def __init__(self, message: str, *, token_id: Any, reason: str, index: Optional[int] = None) -> None:
        self.token_id = token_id
        self.reason = reason
        self.index = index
        super().__init__(message)

    def __reduce__(self) -> Any:
        return _rebuild_token_rejected, (type(self), str(self), self.token_id, self.reason, self.index)


def _rebuild_token_rejected(
    cls: Type[TokenRejectedError], message: str, token_id: Any, reason: str, index: Optional[int] = None
) -> TokenRejectedError:
    return cls(message, token_id=token_id, reason=reason, index=index)


class RollbackError(MaskForgeError, ValueError):
    """A rollback of more tokens than the session keeps; the session is unchanged.

    Attributes:
        requested: the tokens asked to undo.
        available: the tokens the session can undo (``Session.rollback_available``).
    """

    def __init__(self, message: str, *, requested: int, available: int) -> None:
        self.requested = requested
        self.available = available
        super().__init__(message)

    def __reduce__(self) -> Any:
        return _rebuild_rollback, (type(self), str(self), self.requested, self.available)


def _rebuild_rollback(cls: Type[RollbackError], message: str, requested: int, available: int) -> RollbackError:
    return cls(message, requested=requested, available=available)


class MaskBufferError(MaskForgeError, ValueError):
    """A mask buffer that is too small, read-only, not 1-D or not contiguous."""


class MaskBufferTypeError(MaskBufferError, TypeError):
    """A mask buffer of the wrong kind or element type (e.g. a float64 array)."""


class InvalidArgumentError(MaskForgeError, ValueError):
    """An argument with a value outside its domain (e.g. an unknown bind policy)."""


class ArgumentTypeError(MaskForgeError, TypeError):
    """An argument of the wrong type (e.g. a float token id)."""


class UnsupportedGenerationModeError(MaskForgeError):
    """A generation mode or placement that constrained decoding cannot serve (contrastive search,
    an encoder-decoder model, a model off the CPU)."""


class UnsupportedConstraintError(MaskForgeError, ValueError):
    """A kind of constraint MaskForge does not compile (a grammar in Lark, EBNF or GBNF), never
    replaced by another kind.

    Attributes:
        kind: the kind asked for, e.g. ``"grammar"``.
    """

    def __init__(self, message: str, *, kind: str) -> None:
        self.kind = kind
        super().__init__(message)

    def __reduce__(self) -> Any:
        return _rebuild_unsupported, (type(self), str(self), self.kind)


def _rebuild_unsupported(cls: Type[UnsupportedConstraintError], message: str, kind: str) -> UnsupportedConstraintError:
    return cls(message, kind=kind)


class GenerationTruncatedError(MaskForgeError):
    """Generation ran out of tokens before every row produced a complete instance.

    Attributes:
        texts: the text each row produced, in batch order.
        values: the parsed values of the rows that completed, keyed by row index.
    """

    def __init__(self, message: str, *, texts: Sequence[str] = (), values: Optional[Dict[int, Any]] = None) -> None:
        self.texts = list(texts)
        self.values = dict(values or {})
        super().__init__(message)

    def __reduce__(self) -> Any:
        return _rebuild_truncated, (type(self), str(self), self.texts, self.values)


def _rebuild_truncated(
    cls: Type[GenerationTruncatedError], message: str, texts: Sequence[str], values: Dict[int, Any]
) -> GenerationTruncatedError:
    return cls(message, texts=texts, values=values)


class InternalError(MaskForgeError, RuntimeError):
    """A bug inside maskforge (a caught panic); please report it with the message."""

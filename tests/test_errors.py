"""The exception hierarchy and its attributes."""

from __future__ import annotations

import pickle

import pytest

import maskforge
from maskforge import errors


@pytest.mark.parametrize(
    "cls, bases",
    [
        (maskforge.SchemaError, (maskforge.MaskForgeError, ValueError)),
        (maskforge.ReferenceResolutionError, (maskforge.SchemaError,)),
        (maskforge.ResourceLimitError, (maskforge.SchemaError,)),
        (maskforge.VocabularyError, (maskforge.MaskForgeError, ValueError)),
        (maskforge.TokenRejectedError, (maskforge.MaskForgeError, ValueError)),
        (maskforge.MaskBufferError, (maskforge.MaskForgeError, ValueError)),
        (maskforge.MaskBufferTypeError, (maskforge.MaskBufferError, TypeError)),
        (maskforge.InvalidArgumentError, (maskforge.MaskForgeError, ValueError)),
        (maskforge.ArgumentTypeError, (maskforge.MaskForgeError, TypeError)),
        (maskforge.UnsupportedGenerationModeError, (maskforge.MaskForgeError,)),
        (maskforge.GenerationTruncatedError, (maskforge.MaskForgeError,)),
        (maskforge.InternalError, (maskforge.MaskForgeError, RuntimeError)),
    ],
)
def test_hierarchy(cls, bases):
    for base in bases:
        assert issubclass(cls, base)
    assert getattr(errors, cls.__name__) is cls


def test_every_error_is_exported():
    for name in errors.__all__:
        assert getattr(maskforge, name) is getattr(errors, name)


def test_schema_error_roundtrip():
    error = maskforge.ReferenceResolutionError("cannot resolve", code="MF-E005", keyword="$ref", pointer="/$ref")
    assert str(error) == "MF-E005 at /$ref ($ref): cannot resolve"
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is maskforge.ReferenceResolutionError
    assert (copy.code, copy.keyword, copy.pointer, copy.message) == ("MF-E005", "$ref", "/$ref", "cannot resolve")


def test_raised_errors_pickle(compiler, toy_vocabulary):
    with pytest.raises(maskforge.SchemaError) as schema_info:
        compiler.compile("[")
    copy = pickle.loads(pickle.dumps(schema_info.value))
    assert str(copy) == str(schema_info.value)
    session = compiler.compile({"enum": ["a"]}).bind(toy_vocabulary).start_session()
    with pytest.raises(maskforge.TokenRejectedError) as token_info:
        session.advance(13)
    copy = pickle.loads(pickle.dumps(token_info.value))
    assert (copy.token_id, copy.reason, str(copy)) == (13, "leaves_language", str(token_info.value))


def test_token_rejected_message(compiler, toy_vocabulary):
    session = compiler.compile({"enum": ["a"]}).bind(toy_vocabulary).start_session()
    with pytest.raises(maskforge.TokenRejectedError, match="token 13 rejected"):
        session.advance(13)


def test_generation_truncated_error_carries_rows():
    error = maskforge.GenerationTruncatedError("out of tokens", texts=['{"a": tr', '{"a": true}'], values={1: {"a": True}})
    assert error.texts == ['{"a": tr', '{"a": true}']
    assert error.values == {1: {"a": True}}
    copy = pickle.loads(pickle.dumps(error))
    assert (copy.texts, copy.values, str(copy)) == (error.texts, error.values, "out of tokens")

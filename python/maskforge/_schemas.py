"""Schema inputs other than JSON text, turned into JSON text for the native compiler."""

from __future__ import annotations

import json
import typing
from typing import Any

from .errors import ArgumentTypeError, SchemaError


def _dumps(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, allow_nan=False)
    except ValueError as error:  # NaN or infinity: not JSON
        raise SchemaError(f"schema is not valid JSON: {error}", code="MF-E001") from None
    except TypeError as error:
        raise ArgumentTypeError(
            f"schema contains a value that is not JSON ({error}); pass the schema as JSON text instead"
        ) from None


def schema_to_json(schema: Any) -> str:
    """JSON text of ``schema``: bytes (UTF-8 JSON text), a dict, a bool, or a Pydantic-compatible type."""
    if isinstance(schema, (bytes, bytearray)):
        try:
            return bytes(schema).decode("utf-8")
        except UnicodeDecodeError as error:
            raise SchemaError(f"schema is not valid JSON: not UTF-8 ({error})", code="MF-E001") from None
    if isinstance(schema, (bool, dict)):
        return _dumps(schema)
    # Pydantic models describe themselves; other types (dataclasses, TypedDict, Enum, Literal,
    # unions, list[T]) go through pydantic.TypeAdapter, imported only then.
    # Both close the objects of types that do not allow extra fields (see maskforge.targets).
    model_json_schema = getattr(schema, "model_json_schema", None)
    if isinstance(schema, type) and callable(model_json_schema):
        from .targets import closed_json_schema_generator

        return _dumps(model_json_schema(schema_generator=closed_json_schema_generator()))
    if isinstance(schema, type) or typing.get_origin(schema) is not None:
        from .targets import resolve_target

        return resolve_target(schema).schema_json
    raise ArgumentTypeError(
        "schema must be JSON text (str), a dict, a bool or a type (a Pydantic model, dataclass, TypedDict, "
        f"Enum, Literal, union or list[T]); got {type(schema).__name__}"
    )

"""What a generation produces: a JSON Schema and the parser that turns admitted text into a value.

A target is either a schema (JSON text, a dict, a bool), whose values come back as plain JSON
values, or a Python type that Pydantic understands (``BaseModel``, dataclass, ``TypedDict``,
``Enum``, ``Literal``, unions, ``list[T]``...), whose values come back validated into that
type. Types need the ``pydantic`` extra.

A type's objects are closed: they take the fields the type declares and no others, unless the
type keeps extra fields (Pydantic ``extra="allow"``, a ``TypedDict`` with ``extra_items``),
where they follow the schema Pydantic writes. Pydantic's own schema leaves extra keys open
under the default ``extra="ignore"`` (and for ``TypedDict(closed=False)``), though validation
drops them: a model would spend tokens on keys that are thrown away.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import typing
from typing import Any, Callable

from .errors import ArgumentTypeError, MaskForgeError

__all__ = ["Target", "resolve_target"]


@dataclasses.dataclass(frozen=True)
class Target:
    """A schema as JSON text, and how to turn an accepted instance's text into the result."""

    schema_json: str
    parse: Callable[[str], Any]
    description: str


def resolve_target(target: Any) -> Target:
    """The :class:`Target` of a schema or a Pydantic-compatible type; a typed error otherwise."""
    if isinstance(target, Target):
        return target
    if isinstance(target, str):
        return Target(target, json.loads, "a JSON Schema")
    if isinstance(target, (dict, bool)):
        from ._schemas import schema_to_json

        return Target(schema_to_json(target), json.loads, "a JSON Schema")
    if _is_type_like(target):
        return _type_target(target)
    raise ArgumentTypeError(
        "a generation target must be a JSON Schema (str or dict) or a type (a Pydantic model, dataclass, "
        f"TypedDict, Enum, Literal, union or list[T]); got {type(target).__name__}"
    )


def _is_type_like(target: Any) -> bool:
    return isinstance(target, type) or typing.get_origin(target) is not None


def _type_target(target: Any) -> Target:
    try:
        import pydantic
    except ImportError:
        raise MaskForgeError(
            f"generating {_name(target)} values needs Pydantic: pip install 'maskforge[pydantic]'"
        ) from None
    try:
        adapter = pydantic.TypeAdapter(target)
        schema = adapter.json_schema(schema_generator=closed_json_schema_generator())
    except (pydantic.PydanticSchemaGenerationError, pydantic.PydanticUserError) as error:
        raise ArgumentTypeError(f"{_name(target)} has no JSON Schema: {error}") from None
    if isinstance(target, type) and issubclass(target, enum.Enum) and not schema.get("enum"):
        raise ArgumentTypeError(f"the Enum {target.__name__} has no members")
    return Target(json.dumps(schema, ensure_ascii=False), adapter.validate_json, _name(target))


def closed_json_schema_generator() -> Any:
    """Pydantic's JSON Schema generator, with the objects of models, dataclasses and
    ``TypedDict``s that do not say what extra fields are made closed (``additionalProperties:
    false``). Types that allow extra fields keep what Pydantic writes for them."""
    global _ClosedJsonSchema
    if _ClosedJsonSchema is None:
        from pydantic.json_schema import GenerateJsonSchema

        class ClosedJsonSchema(GenerateJsonSchema):
            def model_schema(self, schema: Any) -> Any:
                return _closed(super().model_schema(schema))

            def dataclass_schema(self, schema: Any) -> Any:
                return _closed(super().dataclass_schema(schema))

            def typed_dict_schema(self, schema: Any) -> Any:
                return _closed(super().typed_dict_schema(schema))

        _ClosedJsonSchema = ClosedJsonSchema
    return _ClosedJsonSchema


_ClosedJsonSchema: Any = None


def _closed(json_schema: Any) -> Any:
    # A root model's schema is its root's (not an object of fields): left as it is.
    if isinstance(json_schema, dict) and json_schema.get("type") == "object" and "additionalProperties" not in json_schema:
        json_schema["additionalProperties"] = False
    return json_schema


def _name(target: Any) -> str:
    return getattr(target, "__name__", None) or repr(target)

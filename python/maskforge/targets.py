"""What a generation produces: a constraint and the parser that turns admitted text into a value.

A :class:`Regex` or a :class:`Choice` constrains raw text, which comes back as it is; a
:class:`maskforge.templates.Template` comes back as its parser reads the text (tool calls,
reasoning, or the text itself).

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
from typing import Any, Callable, Optional

from .errors import ArgumentTypeError, MaskForgeError, UnsupportedConstraintError

__all__ = ["Choice", "Grammar", "Regex", "Target", "resolve_target"]


@dataclasses.dataclass(frozen=True)
class Regex:
    """A regular expression on raw text (ECMA-262 syntax, as a schema's ``pattern``), matched
    against the whole output as if written ``^(?:pattern)$``. Generation returns the text."""

    pattern: str

    def __post_init__(self) -> None:
        if not isinstance(self.pattern, str):
            raise ArgumentTypeError(f"Regex takes the pattern as a str, got {type(self.pattern).__name__}")


@dataclasses.dataclass(frozen=True)
class Choice:
    """Exactly one of ``choices``, as raw text. Generation returns the chosen string."""

    choices: tuple

    def __init__(self, choices: Any) -> None:
        if isinstance(choices, str) or not all(isinstance(c, str) for c in choices):
            raise ArgumentTypeError("Choice takes a list of str")
        object.__setattr__(self, "choices", tuple(choices))


@dataclasses.dataclass(frozen=True)
class Grammar:
    """A grammar (``syntax``: ``"lark"``, ``"ebnf"`` or ``"gbnf"``), the kind of constraint
    serving engines call GRAMMAR. MaskForge does not compile grammars: a target of this kind is
    refused with :class:`UnsupportedConstraintError`, never run as another kind. Templates
    (``maskforge.templates``), regexes and JSON Schemas cover tool calls, reasoning and values."""

    text: str
    syntax: str = "lark"


@dataclasses.dataclass(frozen=True)
class Target:
    """What to compile, and how to turn an accepted text into the result.

    ``kind`` is ``"json"`` (``source`` is a JSON Schema's text), ``"regex"`` (a pattern),
    ``"choice"`` (a tuple of strings) or ``"template"`` (a template's JSON document); for
    ``"json"`` targets ``schema_json`` is the schema."""

    schema_json: Optional[str]
    parse: Callable[[str], Any]
    description: str
    kind: str = "json"
    source: Any = None

    @property
    def is_json(self) -> bool:
        """Whether the output is one JSON value (whitespace around it insignificant)."""
        return self.kind == "json"

    def compile(self, compiler: Any) -> Any:
        """This target's program, compiled by ``compiler`` (a :class:`maskforge.Compiler`)."""
        if self.kind == "regex":
            return compiler.compile_regex(self.source)
        if self.kind == "choice":
            return compiler.compile_choice(list(self.source))
        if self.kind == "template":
            return compiler.compile_template(self.source)
        return compiler.compile(self.schema_json)


def _text(text: str) -> str:
    return text


def resolve_target(target: Any) -> Target:
    """The :class:`Target` of a schema, a Pydantic-compatible type, a :class:`Regex` or a
    :class:`Choice`; a typed error otherwise."""
    if isinstance(target, Target):
        return target
    if isinstance(target, Regex):
        return Target(None, _text, f"Regex({target.pattern!r})", "regex", target.pattern)
    if isinstance(target, Choice):
        return Target(None, _text, f"Choice({list(target.choices)!r})", "choice", target.choices)
    if isinstance(target, Grammar):
        raise UnsupportedConstraintError(
            f"a {target.syntax} grammar is not a constraint MaskForge compiles; use a template "
            "(maskforge.templates), a regex or a JSON Schema",
            kind="grammar",
        )
    from .templates import Template

    if isinstance(target, Template):
        return Target(None, target.parse, target.description, "template", target.to_json())
    if isinstance(target, str):
        return Target(target, json.loads, "a JSON Schema")
    if isinstance(target, (dict, bool)):
        from ._schemas import schema_to_json

        return Target(schema_to_json(target), json.loads, "a JSON Schema")
    if _is_type_like(target):
        return _type_target(target)
    raise ArgumentTypeError(
        "a generation target must be a JSON Schema (str or dict), a type (a Pydantic model, dataclass, "
        f"TypedDict, Enum, Literal, union or list[T]), maskforge.Regex, maskforge.Choice or maskforge.Template; got {type(target).__name__}"
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

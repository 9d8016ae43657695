"""Templates: raw text made of parts (literal text, free text, regexes, JSON values, choices,
repetitions and triggered tags), and the ready-made formats built from them: tool calls and a
reasoning prefix. The document language and its exact semantics are in docs/templates.md.

A :class:`Template` is a generation target (``Generator(model, template)``) and compiles with
``Compiler.compile_template``. Builders return templates that compose::

    from maskforge import templates as t

    answer = t.sequence("Answer: ", t.choice("yes", "no"), ".")
    calls = t.tool_calls({"get_weather": Weather, "get_time": {"type": "object", ...}})
    thought = t.reasoning(Profile)            # <think>...</think> then a Profile

A str where a part is expected is literal text; a dict or list is taken as a part of the JSON
document as it is. JSON parts take a schema as a dict, its JSON text or a Python type that
Pydantic understands (whose objects are closed, as for generation targets).
"""

from __future__ import annotations

import dataclasses
import json as _json
from typing import Any, Callable, Iterable, List, Mapping, Optional, Sequence, Union

from .errors import ArgumentTypeError, InvalidArgumentError

__all__ = [
    "Template",
    "ToolCall",
    "ToolCalls",
    "Reasoning",
    "TOOL_CALL_FORMATS",
    "literal",
    "special",
    "text",
    "regex",
    "json",
    "sequence",
    "choice",
    "repeat",
    "tag",
    "tags",
    "tool_calls",
    "reasoning",
    "template_to_json",
]

Part = Union["Template", str, Mapping[str, Any], Sequence[Any]]


def _identity(text: str) -> str:
    return text


class Template:
    """A template: its JSON document (docs/templates.md) and how generation turns an accepted
    text into a result (by default the text itself).

    ``Template(document)`` takes the document as Python data (a str is literal text, a list a
    sequence, a dict one part) or another template; ``Template.from_json(text)`` its JSON text.
    """

    __slots__ = ("document", "parse", "description")

    def __init__(self, document: Any, *, parse: Optional[Callable[[str], Any]] = None, description: str = "") -> None:
        if isinstance(document, Template):
            parse = parse or document.parse
            description = description or document.description
            document = document.document
        self.document = _part(document)
        self.parse: Callable[[str], Any] = parse or _identity
        self.description = description or "a template"

    @classmethod
    def from_json(cls, text: str) -> "Template":
        """The template whose JSON document is ``text``."""
        try:
            return cls(_json.loads(text))
        except ValueError as error:
            raise InvalidArgumentError(f"a template's JSON text does not parse: {error}") from None

    def to_json(self) -> str:
        """The template's JSON document, as the core compiler reads it."""
        return _json.dumps(self.document, ensure_ascii=False)

    def __repr__(self) -> str:
        return f"Template({self.to_json()})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Template) and self.document == other.document

    def __hash__(self) -> int:
        return hash(self.to_json())


def template_to_json(template: Any) -> str:
    """The JSON text of a template given as a :class:`Template` or as Python data."""
    return Template(template).to_json()


def _part(part: Any) -> Any:
    """A part as JSON data: templates unwrapped, sequences listed, everything else checked for type."""
    if isinstance(part, Template):
        return part.document
    if isinstance(part, str):
        return part
    if isinstance(part, Mapping):
        return {str(k): v for k, v in part.items()}
    if isinstance(part, (list, tuple)):
        return [_part(p) for p in part]
    raise ArgumentTypeError(
        f"a template part is a Template, a str (literal text), a dict or a list, got {type(part).__name__}"
    )


def literal(value: str) -> Template:
    """Exactly ``value``."""
    if not isinstance(value, str):
        raise ArgumentTypeError(f"literal() takes a str, got {type(value).__name__}")
    return Template({"literal": value})


def special(name: str) -> Template:
    """The special token named ``name`` in the tokenizer (an added token marked special, such as
    ``<|python_tag|>`` or ``[TOOL_CALLS]``), admitted here by its id. Special tokens have no text:
    generation's text leaves them out, and binding to a vocabulary without the name fails."""
    if not isinstance(name, str):
        raise ArgumentTypeError(f"special() takes the token's name as a str, got {type(name).__name__}")
    return Template({"special": name})


def text(*, exclude: Iterable[str] = (), max_bytes: Optional[int] = None) -> Template:
    """Free UTF-8 text, containing none of ``exclude``, at most ``max_bytes`` bytes long."""
    if isinstance(exclude, str):
        raise ArgumentTypeError("text(exclude=...) takes a list of str, not one str")
    spec: dict = {}
    excluded = list(exclude)
    if excluded:
        spec["exclude"] = excluded
    if max_bytes is not None:
        spec["max_bytes"] = max_bytes
    return Template({"text": spec})


def regex(pattern: str) -> Template:
    """Text that the ECMA-262 ``pattern`` matches as a whole (as ``Compiler.compile_regex``)."""
    if not isinstance(pattern, str):
        raise ArgumentTypeError(f"regex() takes the pattern as a str, got {type(pattern).__name__}")
    return Template({"regex": pattern})


def json(
    schema: Any,
    *,
    max_whitespace: Optional[int] = None,
    closed_objects: Optional[bool] = None,
    property_order: Optional[str] = None,
) -> Template:
    """One JSON value of ``schema`` (a dict, its JSON text or a Pydantic-compatible type), with
    the whitespace, object and key-order policies of the part where given, else the compiler's.
    Generation parses the value (into the type, for a type)."""
    document, _, parse = _schema_part(schema)
    spec: dict = {"json": document}
    if max_whitespace is not None:
        spec["max_whitespace"] = max_whitespace
    if closed_objects is not None:
        spec["closed_objects"] = closed_objects
    if property_order is not None:
        spec["property_order"] = property_order
    return Template(spec, parse=parse, description=f"JSON of {_describe(schema)}")


def sequence(*parts: Part) -> Template:
    """The parts one after another."""
    return Template([_part(p) for p in parts])


def choice(*options: Part) -> Template:
    """Exactly one of the options (each a part)."""
    if not options:
        raise InvalidArgumentError("choice() takes at least one option")
    return Template({"choice": [_part(p) for p in options]})


def repeat(part: Part, *, min: int = 0, max: Optional[int] = None, separator: Optional[Part] = None) -> Template:
    """``part`` from ``min`` to ``max`` times (unbounded when ``max`` is None), with
    ``separator`` between repetitions."""
    spec: dict = {"repeat": _part(part), "min": min}
    if max is not None:
        spec["max"] = max
    if separator is not None:
        spec["separator"] = _part(separator)
    return Template(spec)


def tag(begin: str, content: Part, end: str) -> dict:
    """One tag of :func:`tags`: ``begin``, then ``content``, then ``end``."""
    if not isinstance(begin, str) or not isinstance(end, str):
        raise ArgumentTypeError("a tag's begin and end are str")
    return {"begin": begin, "content": _part(content), "end": end}


def tags(
    tag_list: Sequence[Mapping[str, Any]],
    *,
    triggers: Optional[Sequence[str]] = None,
    at_least_one: bool = False,
    stop_after_first: bool = False,
) -> Template:
    """Free text in which the first occurrence of a trigger commits to a tag that begins with
    it; free text again after the tag (see docs/templates.md for the exact rule)."""
    spec: dict = {"tags": [dict(t) for t in tag_list]}
    if triggers is not None:
        if isinstance(triggers, str):
            raise ArgumentTypeError("tags(triggers=...) takes a list of str, not one str")
        spec["triggers"] = list(triggers)
    if at_least_one:
        spec["at_least_one"] = True
    if stop_after_first:
        spec["stop_after_first"] = True
    return Template(spec)


# ----------------------------------------------------------------------------------------------
# Tool calls


@dataclasses.dataclass(frozen=True)
class ToolCall:
    """One tool call: the tool's name and its arguments, parsed and validated (into the tool's
    type, where the tool was given as a type)."""

    name: str
    arguments: Any


@dataclasses.dataclass(frozen=True)
class ToolCalls:
    """What a tool-call template generated: the free text before the first call (empty where
    the format has none) and the calls in order."""

    text: str
    calls: List[ToolCall]


@dataclasses.dataclass(frozen=True)
class _Format:
    begin: str  # text in front of each call's JSON
    end: str  # text after each call's JSON
    separator: str  # text between one call's end and the next call's begin
    arguments_key: str
    free_text: bool  # whether free text may come before the first call
    trigger: Optional[str]  # what commits free text to a call
    special: Optional[str] = None  # a special token in front of the calls, which are one JSON array


# Hermes / Qwen2.5 (the chat templates of NousResearch's Hermes and of Qwen2.5): free text, then
# `<tool_call>\n{"name": ..., "arguments": ...}\n</tool_call>` blocks, one per line.
# Llama 3.1-3.3 JSON tool calling (Meta's prompt format; vLLM's `llama3_json` parser): the output
# is `{"name": ..., "parameters": ...}`, several separated by `; ` (without the optional
# `<|python_tag|>` in front). Mistral (v3 tokenizers; vLLM's `mistral` parser): the special token
# `[TOOL_CALLS]`, then one JSON array of `{"name": ..., "arguments": ...}` objects.
TOOL_CALL_FORMATS = {
    "hermes": _Format("<tool_call>\n", "\n</tool_call>", "\n", "arguments", True, "<tool_call>"),
    "llama3": _Format("", "", "; ", "parameters", False, None),
    "mistral": _Format("", "", "", "arguments", False, None, special="[TOOL_CALLS]"),
}


def tool_calls(
    tools: Mapping[str, Any],
    format: str = "hermes",
    *,
    text: Optional[bool] = None,
    required: bool = True,
    parallel: bool = True,
    ordered: bool = True,
    max_whitespace: Optional[int] = None,
    python_tag: bool = False,
) -> Template:
    """Tool calls in one of :data:`TOOL_CALL_FORMATS`, for ``tools``: a mapping of each tool's
    name to its argument schema (a dict, its JSON text or a Pydantic-compatible type).

    ``text``: whether free text may come before the first call (default: where the format has
    it); ``required``: at least one call (otherwise free text alone is also complete; needs a
    format with free text); ``parallel``: more than one call. Each call is an object of exactly
    ``name`` and the arguments key, for one of the tools; ``ordered`` (the default) writes the
    name first and every object's keys in the order its schema declares them (streaming tool
    parsers read the name before the arguments; ``ordered=False`` takes any order).
    ``max_whitespace``: the most whitespace characters in a row inside and around each call's
    JSON (default: the compiler's policy). ``python_tag`` (``"llama3"`` only): Llama 3's
    special token ``<|python_tag|>`` may come first (the vocabulary must name it). Generation
    returns :class:`ToolCalls`.
    """
    try:
        fmt = TOOL_CALL_FORMATS[format]
    except (KeyError, TypeError):
        raise InvalidArgumentError(
            f"tool_calls(format=...) is one of {sorted(TOOL_CALL_FORMATS)}, got {format!r}"
        ) from None
    if not isinstance(tools, Mapping) or not tools:
        raise InvalidArgumentError("tool_calls() takes a non-empty mapping of tool names to argument schemas")
    free_text = fmt.free_text if text is None else text
    if free_text and not fmt.free_text:
        raise InvalidArgumentError(f"the {format!r} format has no free text before its calls")
    if not required and not free_text:
        raise InvalidArgumentError("tool_calls(required=False) needs free text before the calls (text=True)")
    if python_tag and format != "llama3":
        raise InvalidArgumentError("tool_calls(python_tag=True) is for the 'llama3' format")
    validators = {}
    members = []
    defs: dict = {}
    for index, (name, schema) in enumerate(tools.items()):
        if not isinstance(name, str) or not name:
            raise ArgumentTypeError("tool names are non-empty str")
        document, validate, _ = _schema_part(schema)
        validators[name] = validate
        if _has_local_refs(document):
            # The tool's schema refers into itself (a Pydantic type's `$defs`): it moves under
            # the call schema's `$defs`, its references following it.
            key = f"tool_{index}"
            defs[key] = _rebased(document, f"#/$defs/{key}")
            document = {"$ref": f"#/$defs/{key}"}
        members.append(
            {
                "type": "object",
                "properties": {"name": {"const": name}, fmt.arguments_key: document},
                "required": ["name", fmt.arguments_key],
                "additionalProperties": False,
            }
        )
    call_schema = members[0] if len(members) == 1 else {"anyOf": members}
    if fmt.special is not None:
        # The calls as one JSON array after the special token (its text is no part of the output).
        array: dict = {"type": "array", "items": call_schema, "minItems": 1}
        if not parallel:
            array["maxItems"] = 1
        return Template(
            [{"special": fmt.special}, _call_part(array, defs, ordered, max_whitespace)],
            parse=_ArrayCallParser(validators, fmt.arguments_key),
            description=f"{format} tool calls of {', '.join(tools)}",
        )
    call_json = _call_part(call_schema, defs, ordered, max_whitespace)
    call = [fmt.begin, call_json, fmt.end] if fmt.begin or fmt.end else [call_json]
    if free_text:
        assert fmt.trigger is not None
        first = {
            "tags": [{"begin": fmt.begin, "content": call_json, "end": fmt.end}],
            "triggers": [fmt.trigger],
            "stop_after_first": True,
        }
        if required:
            first["at_least_one"] = True
    else:
        first = call
    parts: list = [{"repeat": {"special": "<|python_tag|>"}, "min": 0, "max": 1}] if python_tag else []
    parts.append(first)
    if parallel:
        parts.append({"repeat": [fmt.separator, *call], "min": 0})
    names = ", ".join(tools)
    return Template(
        parts,
        parse=_ToolCallParser(fmt, validators, free_text),
        description=f"{format} tool calls of {names}",
    )


def _call_part(schema: dict, defs: dict, ordered: bool, max_whitespace: Optional[int]) -> dict:
    """The JSON part of a format's calls: `schema` at the root, with the tools' `$defs`."""
    part: dict = {"json": {**schema, "$defs": defs} if defs else schema}
    if ordered:
        part["property_order"] = "declared"
    if max_whitespace is not None:
        part["max_whitespace"] = max_whitespace
    return part


# Keywords whose values are data, not schemas: no reference inside them is one.
_DATA_KEYWORDS = frozenset({"const", "enum", "default", "examples"})


def _has_local_refs(schema: Any) -> bool:
    if isinstance(schema, dict):
        ref = schema.get("$ref")
        if isinstance(ref, str) and (ref == "#" or ref.startswith("#/")):
            return True
        return any(_has_local_refs(v) for k, v in schema.items() if k not in _DATA_KEYWORDS)
    if isinstance(schema, list):
        return any(_has_local_refs(v) for v in schema)
    return False


def _rebased(schema: Any, base: str) -> Any:
    """`schema` with its references into its own root (`#`, `#/...`) made to point under `base`."""
    if isinstance(schema, dict):
        out = {}
        for key, value in schema.items():
            if key == "$ref" and isinstance(value, str) and (value == "#" or value.startswith("#/")):
                out[key] = base + value[1:]
            elif key in _DATA_KEYWORDS:
                out[key] = value
            else:
                out[key] = _rebased(value, base)
        return out
    if isinstance(schema, list):
        return [_rebased(v, base) for v in schema]
    return schema


class _ArrayCallParser:
    """Reads calls written as one JSON array (the special token in front has no text)."""

    def __init__(self, validators: Mapping[str, Callable[[Any], Any]], arguments_key: str) -> None:
        self.validators = dict(validators)
        self.arguments_key = arguments_key

    def __call__(self, output: str) -> ToolCalls:
        calls = [ToolCall(c["name"], self.validators[c["name"]](c[self.arguments_key])) for c in _json.loads(output)]
        return ToolCalls("", calls)


class _ToolCallParser:
    """Reads the calls back out of an accepted text. Each call's JSON is decoded where its begin
    text ends (strings inside it may hold the end text); whitespace around a call's JSON may be
    the JSON part's own or the format's, so the format's texts are matched without it."""

    def __init__(self, fmt: _Format, validators: Mapping[str, Callable[[Any], Any]], free_text: bool) -> None:
        self.begin, self.end, self.separator = (t.strip(_WS) for t in (fmt.begin, fmt.end, fmt.separator))
        self.arguments_key = fmt.arguments_key
        self.validators = dict(validators)
        self.free_text = free_text

    def __call__(self, output: str) -> ToolCalls:
        at = 0
        prose = ""
        if self.free_text:
            at = output.find(self.begin)
            if at < 0:
                return ToolCalls(output, [])
            prose = output[:at]
        decoder = _json.JSONDecoder()
        calls = []
        while True:
            at = _expect(output, at, self.begin)
            value, at = decoder.raw_decode(output, _skip_ws(output, at))
            at = _expect(output, at, self.end)
            name = value["name"]
            calls.append(ToolCall(name, self.validators[name](value[self.arguments_key])))
            if _skip_ws(output, at) == len(output):
                return ToolCalls(prose, calls)
            at = _expect(output, at, self.separator)


_WS = " \t\n\r"


def _skip_ws(text: str, at: int) -> int:
    while at < len(text) and text[at] in _WS:
        at += 1
    return at


def _expect(text: str, at: int, expected: str) -> int:
    at = _skip_ws(text, at)
    if not text.startswith(expected, at):
        raise ValueError(f"expected {expected!r} at offset {at} of the output")
    return at + len(expected)


# ----------------------------------------------------------------------------------------------
# Reasoning


@dataclasses.dataclass(frozen=True)
class Reasoning:
    """What a reasoning template generated: the reasoning text (between the begin and end tags)
    and the result of the template that follows."""

    reasoning: str
    output: Any


def reasoning(
    target: Any,
    begin: Optional[str] = "<think>",
    end: str = "</think>",
    *,
    max_bytes: Optional[int] = None,
    whitespace: int = 2,
) -> Template:
    """Free reasoning text between ``begin`` and ``end`` (the text may not contain ``end``;
    ``begin=None`` when the prompt already opened it), then ``target``: a :class:`Template`,
    after up to ``whitespace`` spaces or newlines, or a schema or type (one JSON value, with
    the whitespace in front of it that the compiler's policy allows). Generation returns
    :class:`Reasoning`."""
    if not isinstance(end, str) or not end:
        raise InvalidArgumentError("reasoning(end=...) is a non-empty str")
    if begin is not None and not isinstance(begin, str):
        raise ArgumentTypeError("reasoning(begin=...) is a str or None")
    if not isinstance(whitespace, int) or whitespace < 0:
        raise InvalidArgumentError("reasoning(whitespace=...) is a count of at least 0")
    is_template = isinstance(target, Template)
    inner = target if is_template else json(target)
    parts: list = [begin] if begin else []
    parts += [text(exclude=[end], max_bytes=max_bytes).document, end]
    # A JSON value reads the whitespace in front of it itself (as its compiler bounds it).
    if whitespace and is_template:
        parts.append({"regex": f"[ \\t\\n\\r]{{0,{whitespace}}}"})
    parts.append(inner.document)
    opener = begin or ""

    def parse(output: str) -> Reasoning:
        close = output.index(end, len(opener))
        rest = output[close + len(end):]
        # The whitespace part may take what the inner template could also start with; a JSON
        # value reads the same either way, and raw text gets what follows the whitespace part.
        skipped = len(rest) - len(rest.lstrip(" \t\n\r"))
        return Reasoning(output[len(opener):close], inner.parse(rest[min(skipped, whitespace):]))

    return Template(parts, parse=parse, description=f"reasoning, then {inner.description}")


# ----------------------------------------------------------------------------------------------


def _schema_part(schema: Any) -> tuple:
    """A schema as JSON data for a JSON part, the validator of a value decoded from JSON, and
    the parser of the value's JSON text."""
    from .targets import resolve_target

    if isinstance(schema, Template):
        raise ArgumentTypeError("a JSON part takes a schema or a type, not a Template")
    target = resolve_target(schema)
    if not target.is_json:
        raise ArgumentTypeError(f"a JSON part takes a schema or a type, not {target.description}")
    document = _json.loads(target.schema_json)
    if target.parse is _json.loads:
        return document, _identity, target.parse
    # A type's values are validated as JSON (as generation does), not as Python data.
    return document, lambda value: target.parse(_json.dumps(value)), target.parse


def _describe(schema: Any) -> str:
    return getattr(schema, "__name__", None) or "a schema"

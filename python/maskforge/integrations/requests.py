"""The constraint kinds serving engines ask for, compiled by MaskForge.

vLLM's ``StructuredOutputOptions`` and SGLang's ``dispatch_*`` methods name the same six
kinds: a JSON Schema, any JSON object, a regex, a choice among strings, a structural tag, and
a grammar. The first five compile; a grammar (Lark, EBNF, GBNF) raises
:class:`maskforge.UnsupportedConstraintError`, never runs as another kind.

Structural tags come in the two JSON forms the engines pass through to XGrammar:

- the first one, ``{"structures": [{"begin", "schema", "end"}, ...], "triggers": [...]}``:
  free text in which a trigger commits to one of the tags that begin with it, any number of
  times (a template ``tags`` part);
- the ``{"type": "structural_tag", "format": {...}}`` form, whose formats map onto template
  parts: ``const_string`` (literal), ``json_schema``, ``any_text`` (free text; inside a
  ``tag``, up to the first occurrence of the tag's end), ``regex``, ``sequence``, ``or``,
  ``tag``, ``triggered_tags`` and ``tags_with_separator``. A format of another type raises
  ``UnsupportedConstraintError`` naming it.
"""

from __future__ import annotations

import enum
import json
import threading
from collections import OrderedDict
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

from .._native import BoundSchema, Compiler, SchemaProgram, Vocabulary
from ..errors import InvalidArgumentError, UnsupportedConstraintError

__all__ = ["RequestKind", "compile_request", "structural_tag_template", "vocabulary_from_tokenizer", "ProgramCache"]


class RequestKind(enum.Enum):
    """The constraint kinds, by the names vLLM's ``StructuredOutputOptions`` gives them."""

    JSON = "json"
    JSON_OBJECT = "json_object"
    REGEX = "regex"
    GRAMMAR = "grammar"
    CHOICE = "choice"
    STRUCTURAL_TAG = "structural_tag"

    @classmethod
    def of(cls, kind: Any) -> "RequestKind":
        """The kind of ``kind``: a ``RequestKind``, an engine's enum member of the same name
        (vLLM's ``StructuredOutputOptions.JSON``), or its name or value as a string."""
        if isinstance(kind, cls):
            return kind
        name = getattr(kind, "name", kind)
        if isinstance(name, str):
            for member in cls:
                if name.upper() == member.name or name.lower() == member.value:
                    return member
        raise InvalidArgumentError(f"unknown structured-output request kind {kind!r}")


def compile_request(compiler: Compiler, kind: Any, spec: Any) -> SchemaProgram:
    """The program of one request: ``spec`` is the schema (JSON text or data), nothing for a
    JSON object, the pattern, the choices (a list, or its JSON text), or the structural tag
    (JSON text or data)."""
    kind = RequestKind.of(kind)
    if kind is RequestKind.JSON:
        return compiler.compile(spec)
    if kind is RequestKind.JSON_OBJECT:
        return compiler.compile_json_object()
    if kind is RequestKind.REGEX:
        return compiler.compile_regex(spec)
    if kind is RequestKind.CHOICE:
        choices = json.loads(spec) if isinstance(spec, str) else spec
        return compiler.compile_choice(choices)
    if kind is RequestKind.STRUCTURAL_TAG:
        return compiler.compile_template(structural_tag_template(spec))
    raise UnsupportedConstraintError(
        "MaskForge does not compile grammars (Lark, EBNF, GBNF): ask for a JSON Schema, a regex, a choice or a "
        "structural tag",
        kind="grammar",
    )


def structural_tag_template(spec: Any) -> Any:
    """The template document (docs/templates.md) of a structural tag."""
    tag = json.loads(spec) if isinstance(spec, (str, bytes)) else spec
    if not isinstance(tag, dict):
        raise InvalidArgumentError(f"a structural tag is a JSON object, got {type(tag).__name__}")
    if "structures" in tag:
        structures = tag["structures"]
        if not isinstance(structures, list) or not structures:
            raise InvalidArgumentError("a structural tag's 'structures' is a non-empty list")
        tags = []
        for item in structures:
            if not isinstance(item, dict) or not {"begin", "end"} <= item.keys():
                raise InvalidArgumentError("each structure has 'begin', 'schema' and 'end'")
            tags.append({"begin": item["begin"], "content": {"json": item.get("schema", True)}, "end": item["end"]})
        part: Dict[str, Any] = {"tags": tags}
        if tag.get("triggers") is not None:
            part["triggers"] = list(tag["triggers"])
        return part
    if "format" in tag:
        return _format_part(tag["format"], "/format")
    raise InvalidArgumentError("a structural tag has 'structures' and 'triggers', or a 'format'")


def _format_part(fmt: Any, where: str, end: Optional[str] = None) -> Any:
    """A template part for one XGrammar structural-tag format; ``end``: the end string of the
    tag this format is the content of (free text stops at its first occurrence)."""
    if not isinstance(fmt, dict) or not isinstance(fmt.get("type"), str):
        raise InvalidArgumentError(f"structural tag format at {where} is not an object with a 'type'")
    kind = fmt["type"]
    if kind == "const_string":
        return {"literal": fmt["value"]}
    if kind == "json_schema":
        return {"json": fmt["json_schema"]}
    if kind == "any_text":
        return {"text": {"exclude": [end]}} if end else {"text": {}}
    if kind == "regex":
        return {"regex": fmt["pattern"]}
    if kind == "sequence":
        elements = fmt["elements"]
        return [
            _format_part(e, f"{where}/elements/{i}", end if i == len(elements) - 1 else None)
            for i, e in enumerate(elements)
        ]
    if kind == "or":
        return {"choice": [_format_part(e, f"{where}/elements/{i}", end) for i, e in enumerate(fmt["elements"])]}
    if kind == "tag":
        return _tag(fmt, where)
    if kind == "triggered_tags":
        part: Dict[str, Any] = {
            "tags": [_tag(t, f"{where}/tags/{i}") for i, t in enumerate(fmt["tags"])],
            "at_least_one": bool(fmt.get("at_least_one", False)),
            "stop_after_first": bool(fmt.get("stop_after_first", False)),
        }
        if fmt.get("triggers") is not None:
            part["triggers"] = list(fmt["triggers"])
        return part
    if kind == "tags_with_separator":
        alternatives = [_tag(t, f"{where}/tags/{i}") for i, t in enumerate(fmt["tags"])]
        one = alternatives[0] if len(alternatives) == 1 else {"choice": alternatives}
        return {
            "repeat": one,
            "min": 1 if fmt.get("at_least_one", False) else 0,
            "max": 1 if fmt.get("stop_after_first", False) else None,
            "separator": {"literal": fmt.get("separator", "")},
        }
    raise UnsupportedConstraintError(
        f"structural tag format {kind!r} at {where} is not one MaskForge compiles", kind=f"structural_tag:{kind}"
    )


def _tag(fmt: Dict[str, Any], where: str) -> Dict[str, Any]:
    content = _format_part(fmt["content"], f"{where}/content", fmt["end"])
    return {"begin": fmt["begin"], "content": content, "end": fmt["end"]}


def vocabulary_from_tokenizer(tokenizer: Any, vocab_size: int, eos_token_ids: Optional[Iterable[int]] = None) -> Vocabulary:
    """The vocabulary of a Hugging Face fast tokenizer (or an engine's wrapper of one), as wide
    as the model's logits (``vocab_size``), with EOS ``eos_token_ids`` (default: the
    tokenizer's ``eos_token_id``)."""
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is None:
        raise InvalidArgumentError(
            f"{type(tokenizer).__name__} is not a Hugging Face fast tokenizer: MaskForge reads token bytes from "
            "tokenizer.json"
        )
    eos = list(eos_token_ids) if eos_token_ids is not None else [tokenizer.eos_token_id]
    eos = [int(e) for e in eos if e is not None]
    if not eos:
        raise InvalidArgumentError("the tokenizer has no EOS token (eos_token_id)")
    return Vocabulary.from_tokenizer_json_str(backend.to_str(), mask_vocab_size=int(vocab_size), eos_token_id=eos)


class ProgramCache:
    """Bound programs by request (kind, spec), least recently used first out: a server sees
    the same few schemas again and again, and binding costs more than a lookup."""

    def __init__(self, compiler: Compiler, vocabulary: Vocabulary, capacity: int = 256) -> None:
        self.compiler = compiler
        self.vocabulary = vocabulary
        self.capacity = capacity
        self._bound: "OrderedDict[Tuple[RequestKind, str], BoundSchema]" = OrderedDict()
        self._lock = threading.Lock()

    def bound(self, kind: Any, spec: Any) -> BoundSchema:
        kind = RequestKind.of(kind)
        key = (kind, spec if isinstance(spec, str) else json.dumps(spec, sort_keys=True))
        with self._lock:
            hit = self._bound.get(key)
            if hit is not None:
                self._bound.move_to_end(key)
                return hit
        bound = compile_request(self.compiler, kind, spec).bind(self.vocabulary)
        with self._lock:
            self._bound[key] = bound
            while len(self._bound) > self.capacity:
                self._bound.popitem(last=False)
        return bound

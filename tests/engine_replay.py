"""What the serving-engine adapter tests share: requests of every kind with a text each
accepts, the tokens of that text, and the mask of a fresh session that replayed a token
sequence (the reference every adapter's mask is compared with, bit for bit)."""

from __future__ import annotations

import json
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

import maskforge
from maskforge.integrations.requests import compile_request

TOOL = {"type": "object", "properties": {"city": {"type": "string", "maxLength": 12}, "days": {"type": "integer", "minimum": 1}},
        "required": ["city"], "additionalProperties": False}

# (kind, spec as the engine passes it, a text the request accepts)
REQUESTS: List[Tuple[str, object, str]] = [
    ("json", json.dumps({"type": "object", "properties": {"name": {"type": "string"}, "age": {"type": "integer"}}, "required": ["name"]}),
     '{"name": "Ada", "age": 36}'),
    ("json_object", None, '{"k": [1, {"x": null}]}'),
    ("regex", r"[0-9]{3}-[a-z]{2,5}", "123-abcd"),
    ("choice", json.dumps(["positive", "negative", "neutral"]), "neutral"),
    ("structural_tag",
     json.dumps({"type": "structural_tag", "structures": [{"begin": "<function=get_weather>", "schema": TOOL, "end": "</function>"}],
                 "triggers": ["<function="]}),
     'Let me check. <function=get_weather>{"city": "Paris", "days": 2}</function> Done.'),
    ("structural_tag",
     json.dumps({"type": "structural_tag", "format": {"type": "triggered_tags", "triggers": ["<tool_call>"], "tags": [
         {"type": "tag", "begin": "<tool_call>\n", "content": {"type": "json_schema", "json_schema": TOOL}, "end": "\n</tool_call>"}],
         "at_least_one": True, "stop_after_first": True}}),
     'Sure.<tool_call>\n{"city": "Oslo"}\n</tool_call>'),
]


class Reference:
    """Fresh sessions of each request, replaying committed tokens from the start."""

    def __init__(self, vocabulary: maskforge.Vocabulary, compiler: Optional[maskforge.Compiler] = None) -> None:
        self.vocabulary = vocabulary
        self.compiler = compiler or maskforge.Compiler.without_cache()
        self._bound: Dict[Tuple[str, str], maskforge.BoundSchema] = {}

    def bound(self, kind: str, spec: object) -> maskforge.BoundSchema:
        key = (kind, json.dumps(spec))
        if key not in self._bound:
            self._bound[key] = compile_request(self.compiler, kind, spec).bind(self.vocabulary)
        return self._bound[key]

    def mask(self, kind: str, spec: object, committed: Sequence[int]) -> np.ndarray:
        """The int32 mask row after ``committed`` (every bit set once EOS was committed)."""
        bound = self.bound(kind, spec)
        session = bound.start_session()
        for token in committed:
            session.advance(token)
        row = np.zeros(bound.mask_word_count, dtype=np.int32)
        if session.is_finished():
            row[:] = -1
        else:
            session.write_mask(row)
        return row

    def tokens(self, kind: str, spec: object, text: str) -> List[int]:
        """The tokens of ``text`` (the longest allowed token at each step), then EOS."""
        bound = self.bound(kind, spec)
        session = bound.start_session()
        data, tokens = text.encode(), []
        row = np.zeros(bound.mask_word_count, dtype=np.uint32)
        while data:
            session.write_mask(row)
            bits = np.unpackbits(row.view(np.uint8), bitorder="little")
            best = max(
                (int(t) for t in np.flatnonzero(bits) if data.startswith(self.vocabulary.token_bytes(int(t)) or b"\xff\xfe")),
                key=lambda t: len(self.vocabulary.token_bytes(t)),
            )
            session.advance(best)
            tokens.append(best)
            data = data[len(self.vocabulary.token_bytes(best)):]
        eos = self.vocabulary.eos_token_ids[0]
        assert session.is_allowed(eos), text
        return tokens + [eos]

    def refused_token(self, kind: str, spec: object, committed: Sequence[int]) -> int:
        """A token the mask after ``committed`` refuses."""
        row = self.mask(kind, spec, committed).view(np.uint32)
        bits = np.unpackbits(row.view(np.uint8), bitorder="little")
        return int(np.flatnonzero(bits == 0)[0])

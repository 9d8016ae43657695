"""Forced tokens (``maskforge.forced_tokens`` / ``TokenSplitter``) on real tokenizers: walking the
tokenizer's own tokens of real instances, at every position the forced tokens are exactly the
next tokens the tokenizer produced for the whole text, the session accepts them, and somewhere
forcing skips whole keys. GPT-2 and Llama-3 (byte-level BPE with regex pre-tokenizers), Mistral
and the stories260K Llama-2 vocabulary (SentencePiece BPE, no pre-tokenizer); Llama-3 is read
from ``$MASKFORGE_TOKENIZERS`` when present.
"""

from __future__ import annotations

import json
import lzma
import os
from pathlib import Path

import pytest

import maskforge
from conftest import DATA_DIR, TOKENIZERS_DIR
from maskforge.forcing import TokenSplitter, _complete_utf8

tokenizers = pytest.importorskip("tokenizers")

EXTRA = Path(os.environ.get("MASKFORGE_TOKENIZERS", Path(__file__).resolve().parents[2] / "shared" / "tokenizers"))
TOKENIZERS = {
    "gpt2": TOKENIZERS_DIR / "gpt2.tokenizer.json",
    "mistral": TOKENIZERS_DIR / "mistral-v3.tokenizer.json",
    "qwen2.5": TOKENIZERS_DIR / "qwen2.5.tokenizer.json.xz",
    "stories260K": DATA_DIR / "models" / "stories260K" / "tokenizer.json",
    "llama3": EXTRA / "llama3.tokenizer.json",
}

PROFILE = {
    "type": "object",
    "properties": {
        "description": {"type": "string", "maxLength": 40},
        "identifier": {"type": "integer"},
        "preferences": {
            "type": "object",
            "properties": {"notifications_enabled": {"type": "boolean"}, "theme": {"enum": ["dark", "light"]}},
            "required": ["notifications_enabled", "theme"],
            "additionalProperties": False,
        },
        "tags": {"type": "array", "items": {"enum": ["alpha", "alphabet", "beta/gamma"]}},
    },
    "required": ["description", "identifier", "preferences", "tags"],
    "additionalProperties": False,
}
INSTANCES = [
    {"description": "Tom's cat", "identifier": 12, "tags": ["alpha", "beta/gamma"],
     "preferences": {"notifications_enabled": True, "theme": "dark"}},
    {"tags": [], "preferences": {"theme": "light", "notifications_enabled": False}, "identifier": -3,
     "description": "é ü 東京"},
]


def load(name):
    path = TOKENIZERS[name]
    if not path.exists():
        pytest.skip(f"{path} not found")
    text = lzma.open(path, "rt").read() if path.suffix == ".xz" else path.read_text()
    tokenizer = tokenizers.Tokenizer.from_str(text)
    return tokenizer, maskforge.Vocabulary.from_tokenizer_json_str(text)


@pytest.mark.parametrize("name", list(TOKENIZERS))
@pytest.mark.parametrize("separators", [(",", ":"), (", ", ": ")], ids=["compact", "spaced"])
def test_forced_tokens_are_the_tokenizers_own(name, separators):
    tokenizer, vocabulary = load(name)
    splitter = TokenSplitter(tokenizer, vocabulary)
    bound = maskforge.Compiler(max_json_whitespace=1).compile(PROFILE).bind(vocabulary)
    context = len(tokenizer.encode("\n", add_special_tokens=False).ids)
    forced_total = longest = 0
    for instance in INSTANCES:
        text = json.dumps(instance, separators=separators, ensure_ascii=False)
        own = tokenizer.encode("\n" + text, add_special_tokens=False).ids[context:]
        assert splitter.token_bytes(own) == text.encode()
        session = bound.start_session()
        for k in range(len(own) + 1):
            forced = splitter.forced_tokens(session, own[:k])
            assert own[k:k + len(forced)] == forced, (name, text, k, forced)
            assert session.validate_tokens(forced) == len(forced)
            forced_total += len(forced)
            longest = max(longest, len(splitter.token_bytes(forced)))
            if k < len(own):
                session.advance(own[k])
        assert session.is_accepting()
    assert forced_total > 0
    # Somewhere a whole key is skipped: once `n` or `t` is chosen inside `preferences`, the
    # rest of that key is forced (in one or more tokens, as the tokenizer splits it).
    assert longest >= len("otifications_enabled"), (name, longest)


def test_after_tokens_the_tokenizer_would_not_produce_the_forced_text_starts_afresh():
    tokenizer, vocabulary = load("gpt2")
    splitter = TokenSplitter(tokenizer, vocabulary)
    bound = maskforge.Compiler(max_json_whitespace=0).compile(PROFILE).bind(vocabulary)
    session = bound.start_session()
    spelled = [tokenizer.token_to_id(piece) for piece in ["{", '"', "d"]]  # `{"` is one GPT-2 token
    session.advance_many(spelled)
    assert session.forced_bytes().startswith(b"escription")
    # Not the tokenizer's own tokens: the forced text is tokenized from where they end.
    # `escription` ends a pre-token; `":"` may still grow into `":""` and is left to the model.
    assert splitter.forced_tokens(session, spelled) == [tokenizer.token_to_id("escription")]


@pytest.mark.parametrize(
    "data, kept", [(b"", b""), (b"ab", b"ab"), ("é".encode(), "é".encode()), ("é".encode()[:1], b""),
                   (b"a" + "東".encode()[:2], b"a"), ("東".encode(), "東".encode())],
)
def test_forced_text_is_cut_at_a_whole_character(data, kept):
    assert _complete_utf8(data) == kept

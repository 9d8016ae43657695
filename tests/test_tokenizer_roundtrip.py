"""Token bytes against real encodings: the bytes of every id in `encode(text)`, concatenated, must
be exactly `text.encode()` (whole encodings, not single-id decodes, which drop leading spaces and
split UTF-8)."""

from __future__ import annotations

import os
import random
import unicodedata
from pathlib import Path

import pytest

import maskforge

tokenizers = pytest.importorskip("tokenizers")

REPO_ROOT = Path(__file__).resolve().parent.parent
VENDORED = REPO_ROOT / "tests" / "data" / "tokenizers"


def _tokenizer_paths() -> list[Path]:
    paths = sorted(VENDORED.glob("*.tokenizer.json"))
    extra = Path(os.environ.get("MASKFORGE_TOKENIZERS", REPO_ROOT.parent / "shared" / "tokenizers"))
    if extra.is_dir():
        names = {p.name for p in paths}
        paths += [p for p in sorted(extra.glob("*.tokenizer.json")) if p.name not in names]
    return paths


def _texts(count: int, seed: int = 0) -> list[str]:
    """Varied texts: ASCII words, JSON snippets, accents, CJK, emoji, whitespace runs, digits."""
    rng = random.Random(seed)
    pieces = [
        "hello", " world", "JSON", '{"name": "Ada"}', "[1, 2.5e-3, null]", "été", "naïve", "日本語",
        "😀", "🇫🇷", "\n", "  ", "\t", "0123456789", "café au lait", '"\\u00e9"', "Ωμέγα", "ß", "—",
        " ", "don't", "x" * 7,
    ]
    return ["".join(rng.choice(pieces) for _ in range(rng.randint(1, 12))) for _ in range(count)]


@pytest.mark.parametrize("path", _tokenizer_paths(), ids=lambda p: p.name)
def test_encoded_token_bytes_concatenate_to_the_text(path):
    tokenizer = tokenizers.Tokenizer.from_file(str(path))
    vocabulary = maskforge.Vocabulary.from_tokenizer_json(path)
    checked = 0
    for text in _texts(2000):
        text = unicodedata.normalize("NFC", text)
        ids = tokenizer.encode(text, add_special_tokens=False).ids
        got = b"".join(vocabulary.token_bytes(i) or b"" for i in ids)
        want = text.encode("utf-8")
        # SentencePiece tokenizers prepend one space (the dummy prefix) to the first word.
        if got != want and got == b" " + want:
            got = got[1:]
        assert got == want, (path.name, text, ids)
        checked += 1
    assert checked == 2000

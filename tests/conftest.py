"""Shared fixtures: vendored tokenizers, a small hand-made vocabulary, and mask helpers."""

from __future__ import annotations

import importlib.util
import sys

from pathlib import Path
from typing import Callable, List, Optional, Set

import pytest

import maskforge

DATA_DIR = Path(__file__).parent / "data"
TOKENIZERS_DIR = DATA_DIR / "tokenizers"

# A small vocabulary for JSON: single characters, multi-character pieces, one special token
# without bytes (15) and EOS (16). No backslash, so escape spellings never need modelling.
TOY_TOKENS: List[Optional[bytes]] = [
    b"{", b"}", b'"', b"a", b"b", b":", b",", b" ",            # 0-7
    b"true", b"false", b'"a"', b'"a', b'a"', b"c", b"\n",      # 8-14
    None, None,                                                # 15 special, 16 EOS
    b"ab", b'"b"', b'{"', b'":', b"null", b"tr", b"ue", b'"}',  # 17-24
    b"1", b"[", b"]", b"x",                                     # 25-28
]
TOY_EOS = 16

ENUM_SCHEMA = {"enum": ["a", "b"]}
STRING_SCHEMA = {"type": "string"}
OBJECT_SCHEMA = {
    "type": "object",
    "properties": {"a": {"type": "boolean"}},
    "required": ["a"],
    "additionalProperties": False,
}


@pytest.fixture(scope="session")
def gpt2_tokenizer_path() -> Path:
    return TOKENIZERS_DIR / "gpt2.tokenizer.json"


@pytest.fixture(scope="session")
def mistral_tokenizer_path() -> Path:
    return TOKENIZERS_DIR / "mistral-v3.tokenizer.json"


@pytest.fixture(scope="session")
def gpt2_vocabulary(gpt2_tokenizer_path: Path) -> maskforge.Vocabulary:
    return maskforge.Vocabulary.from_tokenizer_json(gpt2_tokenizer_path)


@pytest.fixture(scope="session")
def mistral_vocabulary(mistral_tokenizer_path: Path) -> maskforge.Vocabulary:
    return maskforge.Vocabulary.from_tokenizer_json(mistral_tokenizer_path)


@pytest.fixture
def toy_vocabulary() -> maskforge.Vocabulary:
    return maskforge.Vocabulary.from_id_ordered_tokens(TOY_TOKENS, eos_token_id=TOY_EOS)


@pytest.fixture
def compiler() -> maskforge.Compiler:
    return maskforge.Compiler.without_cache()


def _ids_of(mask: bytes) -> Set[int]:
    """Token ids whose bit is set in a mask of little-endian u32 words."""
    value = int.from_bytes(mask, "little")
    return {i for i in range(len(mask) * 8) if value >> i & 1}


@pytest.fixture
def mask_ids() -> Callable[[maskforge.Session], Set[int]]:
    """Returns a function: session -> set of allowed ids, read from a bytearray mask."""

    def read(session: maskforge.Session) -> Set[int]:
        buffer = bytearray(session.mask_byte_count)
        session.write_mask(buffer)
        return _ids_of(bytes(buffer))

    return read


@pytest.fixture
def ids_of() -> Callable[[bytes], Set[int]]:
    return _ids_of


def load_integration_script(name: str):
    """Imports `integration/<name>.py`, a script rather than a package module, as
    `maskforge_<name>` (registered first so dataclasses and worker processes find it by name)."""
    path = Path(__file__).resolve().parent.parent / "integration" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"maskforge_{name}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module

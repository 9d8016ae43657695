"""Vocabulary construction: id-ordered tokens and tokenizer.json files."""

from __future__ import annotations

import pathlib

import pytest

import maskforge
from conftest import TOY_EOS, TOY_TOKENS


def test_from_id_ordered_tokens(toy_vocabulary):
    assert toy_vocabulary.tokenizer_size == len(TOY_TOKENS)
    assert toy_vocabulary.mask_vocab_size == len(TOY_TOKENS)
    assert toy_vocabulary.mask_word_count == 1
    assert toy_vocabulary.eos_token_ids == (TOY_EOS,)
    assert toy_vocabulary.token_bytes(0) == b"{"
    assert toy_vocabulary.token_bytes(8) == b"true"
    assert toy_vocabulary.token_bytes(15) is None
    assert toy_vocabulary.token_bytes(TOY_EOS) is None
    assert "tokenizer_size=29" in repr(toy_vocabulary)


def test_eos_entry_bytes_are_ignored():
    vocabulary = maskforge.Vocabulary.from_id_ordered_tokens([b"a", b"<eos>"], eos_token_id=1)
    assert vocabulary.token_bytes(1) is None


def test_accepts_tuples_generators_and_bytearrays():
    vocabulary = maskforge.Vocabulary.from_id_ordered_tokens(
        (t for t in [bytearray(b"x"), b"y", None]), eos_token_id=(2,), mask_vocab_size=64
    )
    assert vocabulary.token_bytes(0) == b"x"
    assert vocabulary.mask_vocab_size == 64
    assert vocabulary.mask_word_count == 2
    assert vocabulary.token_bytes(63) is None


@pytest.mark.parametrize(
    "tokens, eos, error",
    [
        ([b"a", b""], 0, maskforge.VocabularyError),  # empty bytes
        ([b"a"], 5, maskforge.VocabularyError),  # EOS outside the vocabulary
        ([b"a", None], -1, maskforge.VocabularyError),
        ([b"a", None], [], maskforge.VocabularyError),
        ([None, None], 0, maskforge.VocabularyError),  # no token with bytes
        ([b"a", "b", None], 2, maskforge.ArgumentTypeError),
        ([b"a", 3, None], 2, maskforge.ArgumentTypeError),
        (b"abc", 0, maskforge.ArgumentTypeError),  # iterating bytes yields ints
        (5, 0, maskforge.ArgumentTypeError),
        ([b"a", None], "1", maskforge.ArgumentTypeError),
        ([b"a", None], 1.0, maskforge.ArgumentTypeError),
        ([b"a", None], True, maskforge.ArgumentTypeError),
    ],
)
def test_bad_vocabularies(tokens, eos, error):
    with pytest.raises(error):
        maskforge.Vocabulary.from_id_ordered_tokens(tokens, eos_token_id=eos)


def test_bad_mask_vocab_size():
    with pytest.raises(maskforge.VocabularyError, match="smaller"):
        maskforge.Vocabulary.from_id_ordered_tokens([b"a", None], eos_token_id=1, mask_vocab_size=1)
    with pytest.raises(maskforge.VocabularyError):
        maskforge.Vocabulary.from_id_ordered_tokens([b"a", None], eos_token_id=1, mask_vocab_size=-3)
    with pytest.raises(maskforge.ArgumentTypeError):
        maskforge.Vocabulary.from_id_ordered_tokens([b"a", None], eos_token_id=1, mask_vocab_size="8")


def test_token_bytes_bad_ids(toy_vocabulary):
    with pytest.raises(maskforge.InvalidArgumentError):
        toy_vocabulary.token_bytes(len(TOY_TOKENS))
    with pytest.raises(maskforge.InvalidArgumentError):
        toy_vocabulary.token_bytes(-1)
    with pytest.raises(maskforge.ArgumentTypeError):
        toy_vocabulary.token_bytes("0")


def test_cannot_construct_directly():
    with pytest.raises(TypeError):
        maskforge.Vocabulary()


def test_gpt2_tokenizer_json(gpt2_vocabulary, gpt2_tokenizer_path):
    assert gpt2_vocabulary.tokenizer_size == 50257
    assert gpt2_vocabulary.mask_vocab_size == 50257
    assert gpt2_vocabulary.eos_token_ids == (50256,)
    assert gpt2_vocabulary.token_bytes(50256) is None
    assert gpt2_vocabulary.token_bytes(0) == b"!"
    assert gpt2_vocabulary.token_bytes(262) == b" the"
    assert gpt2_vocabulary.token_bytes(198) == b"\n"


def test_gpt2_bytes_match_tokenizers_library(gpt2_vocabulary, gpt2_tokenizer_path):
    tokenizers = pytest.importorskip("tokenizers")
    tokenizer = tokenizers.Tokenizer.from_file(str(gpt2_tokenizer_path))
    checked = 0
    for token_id in range(0, 50256, 7):
        token = gpt2_vocabulary.token_bytes(token_id)
        try:
            text = token.decode("utf-8")
        except UnicodeDecodeError:
            continue  # a partial UTF-8 sequence: the library would print U+FFFD
        assert tokenizer.decode([token_id]) == text, token_id
        checked += 1
    assert checked > 6000


def test_mistral_tokenizer_json(mistral_vocabulary, mistral_tokenizer_path):
    tokenizers = pytest.importorskip("tokenizers")
    tokenizer = tokenizers.Tokenizer.from_file(str(mistral_tokenizer_path))
    assert mistral_vocabulary.tokenizer_size == tokenizer.get_vocab_size()
    assert mistral_vocabulary.eos_token_ids == (2,)
    assert mistral_vocabulary.token_bytes(tokenizer.token_to_id("▁the")) == b" the"
    assert mistral_vocabulary.token_bytes(tokenizer.token_to_id("<0x41>")) == b"A"
    for special in ["<s>", "<unk>"]:
        assert mistral_vocabulary.token_bytes(tokenizer.token_to_id(special)) is None


def test_tokenizer_json_options(gpt2_tokenizer_path):
    vocabulary = maskforge.Vocabulary.from_tokenizer_json(
        pathlib.Path(gpt2_tokenizer_path), mask_vocab_size=50304, eos_token_id=[50256, 198]
    )
    assert vocabulary.tokenizer_size == 50257
    assert vocabulary.mask_vocab_size == 50304
    assert vocabulary.mask_word_count == 50304 // 32
    assert vocabulary.eos_token_ids == (198, 50256)
    assert vocabulary.token_bytes(198) is None
    assert vocabulary.token_bytes(50303) is None


def test_tokenizer_json_errors(tmp_path, gpt2_tokenizer_path):
    with pytest.raises(maskforge.VocabularyError, match="cannot read"):
        maskforge.Vocabulary.from_tokenizer_json(tmp_path / "missing.json")
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    with pytest.raises(maskforge.VocabularyError):
        maskforge.Vocabulary.from_tokenizer_json(broken)
    with pytest.raises(maskforge.VocabularyError, match="smaller"):
        maskforge.Vocabulary.from_tokenizer_json(gpt2_tokenizer_path, mask_vocab_size=100)
    with pytest.raises(maskforge.ArgumentTypeError):
        maskforge.Vocabulary.from_tokenizer_json(42)

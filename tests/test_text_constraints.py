"""Raw-text constraints: ``compile_regex``, ``compile_choice`` (and ``compile_json_object``).

Languages are checked against Python's ``regex`` module (full matches, and partial matches for
liveness), masks bit for bit against a slow route that asks that oracle about every token, on
GPT-2, Mistral and Qwen2.5, and generation returns raw text."""

import lzma
import pathlib
import random

import pytest
import regex

import maskforge
from maskforge import errors

DATA = pathlib.Path(__file__).parent / "data" / "tokenizers"
TOKENIZERS = {
    "gpt2": DATA / "gpt2.tokenizer.json",
    "mistral": DATA / "mistral-v3.tokenizer.json",
    "qwen2.5": DATA / "qwen2.5.tokenizer.json.xz",
}

# Patterns on which ECMA-262 (u flag) and Python's `regex` agree: explicit classes, no `\d`,
# `\w`, `\s` (Unicode in Python) and no `$` (Python's admits a final newline).
PATTERNS = [
    r"[0-9]{3}-[0-9]{2,4}",
    r"(yes|no|maybe)!?",
    r"[A-Z][a-z]*( [A-Z][a-z]*){0,3}",
    r"\{\"k\": [0-9]+\}",
    r"(ab|a)(bc|c)*",
    r"[a-c]+x[a-c]*",
    r"é+|😀",
    r"[^a-z]{1,3}",
]


def vocabulary(name):
    path = TOKENIZERS[name]
    text = lzma.open(path, "rt").read() if path.suffix == ".xz" else path.read_text()
    return maskforge.Vocabulary.from_tokenizer_json_str(text)


def oracle_live(pattern, text):
    """Whether some continuation of ``text`` (bytes) fully matches ``pattern``.

    A prefix that ends inside a UTF-8 sequence is live when some character that completes the
    sequence keeps the match alive. The mask cases use patterns whose only non-ASCII characters
    are literals (no `.`, no negated class), so those literals are the only candidates."""
    try:
        decoded = text.decode("utf-8")
    except UnicodeDecodeError as error:
        if error.reason != "unexpected end of data":
            return False
        head, tail = text[: error.start], text[error.start:]
        return any(
            oracle_live(pattern, head + c.encode())
            for c in set(pattern) if ord(c) >= 0x80 and c.encode().startswith(tail)
        )
    return regex.fullmatch(pattern, decoded, partial=True) is not None


def allowed(session, words):
    mask = bytearray(4 * words)
    session.write_mask(mask)
    value = int.from_bytes(mask, "little")
    return {i for i in range(32 * words) if value >> i & 1}


@pytest.mark.parametrize("pattern", PATTERNS)
def test_regex_language_is_the_full_match_language(pattern):
    program = maskforge.Compiler.without_cache().compile_regex(pattern)
    assert program.output == "text"
    rng = random.Random(pattern)
    alphabet = "abcxyzABZ0129-! {}\":ké😀"
    samples = ["".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 9))) for _ in range(400)]
    # And strings of the language itself, from the oracle's own matches of random text.
    samples += ["yes", "no!", "Ada Lovelace", '{"k": 12}', "abcbc", "ééé", "😀", "123-4567", "Z9"]
    for text in samples:
        assert program.accepts(text.encode()) == (regex.fullmatch(pattern, text) is not None), (pattern, text)


@pytest.mark.parametrize("name", list(TOKENIZERS))
def test_masks_equal_the_oracle_token_by_token(name):
    vocab = vocabulary(name)
    token_bytes = {i: vocab.token_bytes(i) for i in range(vocab.mask_vocab_size)}
    compiler = maskforge.Compiler.without_cache()
    cases = [(compiler.compile_regex(p), p, t) for p, t in [
        (PATTERNS[0], "555-1234"), (PATTERNS[2], "Ada Lovelace"), (PATTERNS[6], "éé"), (PATTERNS[1], "maybe!")]]
    choices = ["Argentina", "Australia", "a\"b", " spaced ", "é😀"]
    choice_pattern = "|".join(regex.escape(c) for c in choices)
    cases += [(compiler.compile_choice(choices), choice_pattern, "Australia"),
              (compiler.compile_choice(choices), choice_pattern, " spaced ")]
    for program, pattern, text in cases:
        bound = program.bind(vocab)
        session = bound.start_session()
        words = bound.mask_word_count
        done = b""
        target = text.encode()
        while True:
            got = allowed(session, words)
            expected = {i for i, b in token_bytes.items() if b and oracle_live(pattern, done + b)}
            if regex.fullmatch(pattern, done.decode("utf-8", "ignore")) and oracle_live(pattern, done):
                expected |= set(vocab.eos_token_ids)
            assert got == expected, (name, pattern, done, sorted(got ^ expected)[:10])
            if done == target:
                break
            token = max((i for i in got if token_bytes.get(i) and target[len(done):].startswith(token_bytes[i])),
                        key=lambda i: len(token_bytes[i]))
            session.advance(token)
            done += token_bytes[token]
        assert session.is_accepting()


def test_choice_and_json_object():
    compiler = maskforge.Compiler()
    choice = compiler.compile_choice(["yes", "no"])
    assert choice.output == "text" and choice.bind(vocabulary("gpt2")).output == "text"
    assert choice.accepts(b"yes") and not choice.accepts(b'"yes"')
    obj = compiler.compile_json_object()
    assert obj.output == "json"
    assert obj.accepts(b'{"a": [1]}') and not obj.accepts(b"[1]")


def test_bad_input_is_a_typed_error():
    compiler = maskforge.Compiler()
    with pytest.raises(errors.SchemaError) as caught:
        compiler.compile_regex("(a")
    assert caught.value.code == "MF-E008" and caught.value.keyword == "regex"
    with pytest.raises(errors.SchemaError) as caught:
        compiler.compile_choice([])
    assert caught.value.code == "MF-E002" and caught.value.keyword == "choices"
    with pytest.raises(TypeError):
        compiler.compile_choice("yes")
    with pytest.raises(TypeError):
        compiler.compile_regex(3)
    with pytest.raises(TypeError):
        maskforge.Choice("yes")

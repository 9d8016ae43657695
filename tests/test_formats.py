"""`format: "hostname"` and `"idn-hostname"`, read by the structured arm under IDNA2008.

The official suite (tests/test_conformance.py) judges complete names; here mask-guided walks over
a byte-level vocabulary check liveness (no walk meets an empty mask, every admitted prefix ends
in a name) and an independent reading of what the walks write: LDH labels by their grammar,
A-labels by Python's own Punycode codec, U-labels by the `idna` package (IDNA2008; it also asks
for NFC, which these formats do not, so labels not in NFC, or holding code points Python's
Unicode tables do not know yet, are left to the suite).
"""

import json
import random
import re
import unicodedata

import pytest

maskforge = pytest.importorskip("maskforge")
idna = pytest.importorskip("idna")

from conftest import load_integration_script  # noqa: E402

liveness = load_integration_script("liveness")

SEPARATORS = "[.\u3002\uff0e\uff61]"


@pytest.fixture(scope="module")
def byte_vocabulary():
    tokenizer = liveness.vocabulary_tokens()
    vocabulary = maskforge.Vocabulary.from_id_ordered_tokens(tokenizer.tokens, eos_token_id=tokenizer.eos_token_id)
    return tokenizer, vocabulary, liveness.TokenMatcher(tokenizer.tokens)


def a_label_decodes(label: str) -> bool:
    """An independent A-label check: Python's Punycode codec decodes it to non-ASCII text whose
    encoding is the label again."""
    tail = label[4:].lower()
    try:
        decoded = tail.encode("ascii").decode("punycode")
    except (UnicodeError, ValueError):
        return False
    return not decoded.isascii() and decoded.encode("punycode").decode("ascii") == tail


def plausible_ascii_name(name: str) -> bool:
    labels = name.split(".")
    if len(name) > 253 or not all(0 < len(label) <= 63 for label in labels):
        return False
    for label in labels:
        if not re.fullmatch(r"[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?", label):
            return False
        if label[:4].lower() == "xn--" and not a_label_decodes(label):
            return False
    return True


@pytest.mark.parametrize("fmt", ["hostname", "idn-hostname"])
def test_walks_never_dead_end_and_write_host_names(byte_vocabulary, fmt):
    tokenizer, vocabulary, _ = byte_vocabulary
    bound = maskforge.Compiler().compile({"type": "string", "format": fmt}).bind(vocabulary)
    rng = random.Random(2026)
    outcomes = {"done": 0}
    lengths = []
    for _ in range(60):
        outcome, text = liveness.walk(bound, tokenizer.tokens, tokenizer.eos_token_id, rng)
        assert outcome == "done", f"{fmt}: walk ended {outcome} after {text!r}"
        outcomes["done"] += 1
        name = json.loads(text)
        lengths.append(len(name))
        if fmt == "hostname" or name.isascii():
            assert plausible_ascii_name(name), f"{fmt}: the walk wrote {name!r}"
            continue
        for label in re.split(SEPARATORS, name):
            assert label, name
            known = all(unicodedata.category(c) != "Cn" for c in label)
            if known and unicodedata.normalize("NFC", label) == label:
                idna.encode(label.lower() if label.isascii() else label)  # raises if invalid
    # The walks reach names of some length, not just one letter.
    assert max(lengths) >= 10, lengths


@pytest.mark.parametrize(
    "fmt, name, valid",
    [
        ("hostname", "www.example.com", True),
        ("hostname", "xn--bcher-kva.example", True),
        ("hostname", "XN--BCHER-KVA.example", True),
        ("hostname", "xn--bcher-kvb.example", False),  # decodes, but not to a valid U-label
        ("hostname", "bücher.example", False),
        ("hostname", "a" * 63 + ".b", True),
        ("hostname", "a" * 64 + ".b", False),
        ("idn-hostname", "bücher.example", True),
        ("idn-hostname", "bücher。example", True),
        ("idn-hostname", "Bücher.example", False),  # uppercase in a U-label is DISALLOWED
        ("idn-hostname", "مثال.إختبار", True),
        ("idn-hostname", "1مثال.com", False),  # Bidi rule: a right-to-left label starts with a letter
    ],
)
def test_names_through_masks(byte_vocabulary, fmt, name, valid):
    tokenizer, vocabulary, matcher = byte_vocabulary
    bound = maskforge.Compiler().compile({"type": "string", "format": fmt}).bind(vocabulary)
    text = json.dumps(name, ensure_ascii=False).encode()
    assert liveness.admits(bound, matcher, tokenizer.eos_token_id, text) is valid


def test_unsupported_combinations_are_diagnosed():
    compiler = maskforge.Compiler()
    with pytest.raises(maskforge.SchemaError) as error:
        compiler.compile({"type": "string", "format": "hostname", "pattern": "^a"})
    assert error.value.code == "MF-E003" and error.value.keyword == "format"
    with pytest.raises(maskforge.SchemaError) as error:
        compiler.compile({"type": "string", "format": "idn-email"})
    assert error.value.code == "MF-E003"
    # Length bounds that every host name meets say nothing more.
    compiler.compile({"type": "string", "format": "hostname", "minLength": 1, "maxLength": 255})

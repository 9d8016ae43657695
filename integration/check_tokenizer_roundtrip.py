#!/usr/bin/env python3
"""Checks that MaskForge's token bytes reproduce what a reference tokenizer encodes.

For each tokenizer.json given, a few thousand varied texts are encoded with the PyPI
`tokenizers` package, and the concatenated bytes that MaskForge assigns to the resulting ids
must equal the (normalized) text's UTF-8. MaskForge's bytes are read once per tokenizer from
the `dump_vocabulary` example (`id<TAB>hex-bytes` per line).

    pip install tokenizers
    python integration/check_tokenizer_roundtrip.py PATH/tokenizer.json [...]

Exits non-zero when any text fails or a tokenizer cannot be loaded.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
SP_MARKER = "\u2581"

WORDS = (
    "the of and to in is that for it as was with be by on not he this are or his from at which but have an they "
    "you were her all she there would their we him been has when who will no more if out so said what up its about "
    "into than them can only other new some could time these two may then do first any my now such like our over "
    "man me even most made after also did many before must through back years where much your way well down should "
    "because each just those people Mr how too little state good very make world still own see men work long get "
    "here between both life being under never day same another know while last might us great old year off come "
    "since against go came right used take three JSON schema token mask decoder vocabulary Hello World API HTTP"
).split()

ACCENTED = "éèêëàâäáãåçñóòôöõøúùûüíìîïýÿœæßÉÈÀÇÑÖÜÅØÆŒłśźżčřšžğışőűāēīōū"
COMBINING = ["e\u0301", "a\u0300", "o\u0308", "n\u0303", "c\u0327", "u\u030a", "A\u030a", "i\u0302"]
CJK = "的一是不了人我在有他这中大来上个国和地到以说时要就出也得你会可下而过天去能对小多然于心学么之都好看起发当没成只如事把还用第样道想作种开美总从无情己面最女但现前些所同日手又行意动方期它头经长儿回位分爱老因很给名法间斯知世什两次使身者被高已亲其进此话常与活正感日本語のテキストですカタカナひらがな한국어텍스트입니다안녕하세요"
EMOJI = [
    "😀", "😂", "🥰", "👍", "👍🏽", "🎉", "🚀", "❤️", "🔥", "✨", "🇫🇷", "🇯🇵", "👨‍👩‍👧‍👦", "🧑‍💻", "🏳️‍🌈", "☕", "🤖", "💡", "✅", "❌",
]
SYMBOLS = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~§±×÷°€£¥©®™…–—‘’“”•→←↑↓≤≥≠∞√∑∫πΩαβγδλμσ"
WHITESPACE = [" ", "  ", "   ", "    ", "\t", "\n", "\n\n", "\r\n", " \n", "\t\t", "\u00a0", "\u3000", "\u2003", "\n    "]
CODE = [
    "def f(x):\n    return x + 1\n",
    "for (let i = 0; i < n; i++) {\n\tsum += a[i];\n}",
    "SELECT id, name FROM users WHERE age >= 21;",
    "#include <stdio.h>\nint main(void) { printf(\"hi\\n\"); }",
    "fn main() { println!(\"{}\", 1u8 as char); }",
    "<div class=\"x\">a &amp; b</div>",
]


def random_json_value(rng: random.Random, depth: int = 0):
    kind = rng.randrange(8 if depth < 3 else 5)
    if kind == 0:
        return rng.choice([True, False, None])
    if kind == 1:
        return rng.randint(-10**12, 10**12)
    if kind == 2:
        return round(rng.uniform(-1e6, 1e6), rng.randrange(0, 8))
    if kind in (3, 4):
        return random_short_text(rng)
    if kind in (5, 6):
        return {random_short_text(rng, ascii_only=rng.random() < 0.7): random_json_value(rng, depth + 1)
                for _ in range(rng.randrange(0, 5))}
    return [random_json_value(rng, depth + 1) for _ in range(rng.randrange(0, 5))]


def random_short_text(rng: random.Random, ascii_only: bool = False) -> str:
    if ascii_only:
        return "_".join(rng.choice(WORDS) for _ in range(rng.randrange(1, 3)))
    pick = rng.randrange(5)
    if pick == 0:
        return "".join(rng.choice(ACCENTED) for _ in range(rng.randrange(1, 6)))
    if pick == 1:
        return "".join(rng.choice(CJK) for _ in range(rng.randrange(1, 6)))
    if pick == 2:
        return rng.choice(EMOJI) + rng.choice(WORDS)
    return " ".join(rng.choice(WORDS) for _ in range(rng.randrange(1, 5)))


def random_code_points(rng: random.Random, n: int) -> str:
    out = []
    while len(out) < n:
        plane = rng.random()
        if plane < 0.15:
            cp = rng.randrange(0, 0x20)
        elif plane < 0.5:
            cp = rng.randrange(0x20, 0x800)
        elif plane < 0.85:
            cp = rng.randrange(0x800, 0x10000)
        else:
            cp = rng.randrange(0x10000, 0x110000)
        # Surrogates are not text; a literal `▁` is SentencePiece's own space marker.
        if 0xD800 <= cp <= 0xDFFF or cp == ord(SP_MARKER):
            continue
        out.append(chr(cp))
    return "".join(out)


def make_texts(rng: random.Random, count: int, added: list[str]) -> list[str]:
    generators = [
        lambda: " ".join(rng.choice(WORDS) for _ in range(rng.randrange(1, 30))) + rng.choice(["", ".", "!", "?", "\n"]),
        lambda: json.dumps(random_json_value(rng), ensure_ascii=rng.random() < 0.3,
                           indent=rng.choice([None, None, 2, 4, "\t"])),
        lambda: " ".join(rng.choice(WORDS) + rng.choice(ACCENTED) + rng.choice(COMBINING) for _ in range(rng.randrange(1, 8))),
        lambda: "".join(rng.choice(CJK) for _ in range(rng.randrange(1, 40))),
        lambda: " ".join(rng.choice(EMOJI) * rng.randrange(1, 3) + rng.choice(WORDS) for _ in range(rng.randrange(1, 8))),
        lambda: "".join(rng.choice(WHITESPACE) + rng.choice(WORDS) * rng.randrange(0, 2) for _ in range(rng.randrange(1, 12))),
        lambda: rng.choice(["", " ", "-", "+"]) + "".join(rng.choice("0123456789") for _ in range(rng.randrange(1, 40)))
        + rng.choice(["", ".5", "e10", ",000", " 1234567890"]),
        lambda: random_code_points(rng, rng.randrange(1, 30)),
        lambda: "".join(rng.choice(SYMBOLS) for _ in range(rng.randrange(1, 25))),
        lambda: rng.choice(CODE) * rng.randrange(1, 3),
        lambda: rng.choice(WHITESPACE) * rng.randrange(1, 6) + " ".join(rng.choice(WORDS) for _ in range(3))
        + rng.choice(WHITESPACE) * rng.randrange(1, 6),
    ]
    texts = ["", " ", "a", "\n", "  leading", "trailing  ", "{\"a\": 1}", "Hello, world!", "naïve café 東京 🚀 42"]
    while len(texts) < count:
        parts = [rng.choice(generators)() for _ in range(rng.choice([1, 1, 1, 2, 3]))]
        if added and rng.random() < 0.1:
            parts.insert(rng.randrange(len(parts) + 1), rng.choice(added))
        texts.append(rng.choice(["", " ", "\n"]).join(parts))
    return texts


def components(node, keys=("normalizers", "pretokenizers", "decoders")):
    """Leaves of a (possibly nested) `Sequence` component."""
    if not node:
        return []
    if node.get("type") == "Sequence":
        return [leaf for key in keys for child in node.get(key, []) for leaf in components(child, keys)]
    return [node]


class Expectation:
    """Turns a text into the bytes its tokens must spell, following the tokenizer's normalization."""

    def __init__(self, tokenizer, spec: dict):
        self.tokenizer = tokenizer
        decoders = components(spec.get("decoder"))
        pre_tokenizers = components(spec.get("pre_tokenizer"))
        self.byte_level = any(c.get("type") == "ByteLevel" for c in decoders + pre_tokenizers)
        self.metaspace_pre = any(c.get("type") == "Metaspace" for c in pre_tokenizers)
        self.markers = [SP_MARKER]
        for c in decoders + pre_tokenizers:
            if c.get("type") == "Metaspace":
                self.markers.append(c.get("replacement", SP_MARKER))
        added = [t["content"] for t in spec.get("added_tokens", []) if not t.get("special")]
        self.added = sorted(added, key=len, reverse=True)
        self.split = re.compile("(" + "|".join(map(re.escape, self.added)) + ")") if self.added else None

    def segment(self, text: str) -> str:
        # Added tokens are cut out before normalization, so each remaining segment is normalized alone.
        if not text:
            return ""
        if self.tokenizer.normalizer is not None:
            text = self.tokenizer.normalizer.normalize_str(text)
        if self.metaspace_pre:
            text = "".join(piece for piece, _ in self.tokenizer.pre_tokenizer.pre_tokenize_str(text))
        if not self.byte_level:
            for marker in self.markers:
                text = text.replace(marker, " ")
        return text

    def __call__(self, text: str) -> bytes:
        if self.split is None:
            return self.segment(text).encode()
        pieces = self.split.split(text)
        return "".join(p if i % 2 else self.segment(p) for i, p in enumerate(pieces)).encode()


def load_our_vocabulary(path: Path, dump_command: list[str]) -> list[bytes | None]:
    result = subprocess.run(dump_command + [str(path)], capture_output=True, text=True, cwd=REPO_ROOT)
    if result.returncode != 0:
        raise RuntimeError(f"dump_vocabulary failed for {path}:\n{result.stderr.strip()}")
    tokens: list[bytes | None] = []
    for line in result.stdout.splitlines():
        id_text, _, hex_bytes = line.partition("\t")
        if int(id_text) != len(tokens):
            raise RuntimeError(f"dump_vocabulary output out of order at id {id_text}")
        tokens.append(bytes.fromhex(hex_bytes) if hex_bytes else None)
    return tokens


def check(path: Path, dump_command: list[str], count: int, seed: int, show: int) -> bool:
    from tokenizers import Tokenizer

    spec = json.loads(path.read_text(encoding="utf-8"))
    tokenizer = Tokenizer.from_file(str(path))
    ours = load_our_vocabulary(path, dump_command)
    expect = Expectation(tokenizer, spec)
    texts = make_texts(random.Random(seed), count, expect.added)
    encodings = tokenizer.encode_batch(texts, add_special_tokens=False)

    failures, tokens_checked, ids_seen = [], 0, set()
    for text, encoding in zip(texts, encodings):
        ids = encoding.ids
        tokens_checked += len(ids)
        ids_seen.update(ids)
        missing = [i for i in ids if i >= len(ours) or ours[i] is None]
        got = b"".join(ours[i] or b"" for i in ids if i < len(ours))
        want = expect(text)
        if missing or got != want:
            failures.append((text, ids, missing, got, want))

    with_bytes = sum(1 for t in ours if t is not None)
    ok = not failures
    name = path.name if path.name != "tokenizer.json" else f"{path.parent.name}/{path.name}"
    print(f"{name}: {len(texts) - len(failures)}/{len(texts)} texts ok, {tokens_checked} tokens, "
          f"{len(ids_seen)} distinct ids; vocabulary {len(ours)} ids, {with_bytes} with bytes"
          + ("" if ok else f"; {len(failures)} FAILED"))
    for text, ids, missing, got, want in failures[:show]:
        print(f"  text {text!r}\n    ids {ids[:40]}\n    ids without bytes {missing[:10]}\n"
              f"    ours {got[:120]!r}\n    want {want[:120]!r}")
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("tokenizers", nargs="+", type=Path, help="tokenizer.json files")
    parser.add_argument("--texts", type=int, default=3000, help="texts per tokenizer (default 3000)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--show", type=int, default=5, help="failures to print per tokenizer")
    parser.add_argument("--dump-binary", type=Path,
                        help="a built dump_vocabulary executable (default: build and run it with cargo)")
    args = parser.parse_args()

    if args.dump_binary:
        dump_command = [str(args.dump_binary.resolve())]
    else:
        build = ["cargo", "build", "--release", "-p", "maskforge-core", "--features", "tokenizer-processing",
                 "--example", "dump_vocabulary"]
        subprocess.run(build, cwd=REPO_ROOT, check=True)
        dump_command = ["cargo", "run", "--quiet", "--release", "-p", "maskforge-core", "--features",
                        "tokenizer-processing", "--example", "dump_vocabulary", "--"]

    all_ok = True
    for path in args.tokenizers:
        try:
            all_ok &= check(path.resolve(), dump_command, args.texts, args.seed, args.show)
        except Exception as error:  # report every tokenizer, then fail
            print(f"{path}: ERROR {error}")
            all_ok = False
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main())

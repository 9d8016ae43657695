#!/usr/bin/env python3
"""Coverage, speed and correctness of MaskForge on real-world schema corpora.

Two subcommands, both over the corpora described in `schemas/README.md` of the
shared data folder:

`jsonschemabench`
    For every schema of every JSONSchemaBench subset: compile it with a fresh
    `Compiler.without_cache()`, bind it to the tokenizer and write the first
    mask ("time to first mask" = compile + bind + first mask). Schemas that
    compile then get one instance generated under their masks (at each step an
    allowed token is picked, preferring EOS, closing and short structural
    tokens, with a seeded RNG and a step budget); every `write_mask` is timed
    for the per-token figures, and each completed instance is checked with the
    independent `jsonschema` validator. A completed instance that the validator
    rejects is a MaskForge bug candidate.

`schemastore`
    For every schema of the SchemaStore snapshot: compile it; when it compiles,
    feed each positive instance (it must be admitted token by token, then EOS)
    and each negative instance (it must be refused somewhere, EOS included).
    Each instance is also checked with the `jsonschema` validator; instances
    whose label the validator disputes are listed and kept out of the failure
    count.

Every schema runs in a worker process under a time limit, so one pathological
schema cannot stall the run; a worker that dies is recorded as a crash and
replaced. Compact Markdown tables go to stdout; `--json` writes the full report.

Usage:
    python integration/schema_corpora.py jsonschemabench [--limit N | --sample N] [--jobs 2] [--json out.json]
    python integration/schema_corpora.py schemastore [--limit N] [--jobs 2] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import re
import sys
import time
import traceback
import warnings
from collections import Counter, deque
from dataclasses import dataclass
from decimal import Decimal
from multiprocessing.connection import wait as wait_for_connections
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
from conformance import TokenMatcher, choose_token, dumps, mask_bit  # noqa: E402  (sibling script, imported for its helpers)

BENCH_SUBSETS = (
    "Github_trivial",
    "Github_easy",
    "Github_medium",
    "Github_hard",
    "Github_ultra",
    "Glaiveai2K",
    "JsonSchemaStore",
    "Kubernetes",
    "Snowplow",
    "WashingtonPost",
)
SCHEMASTORE_BASE = "https://json.schemastore.org/"
DEFAULT_STEP_BUDGET = 200
DEFAULT_INSTANCE_BYTES = 200_000
DEFAULT_TIMEOUT = {"jsonschemabench": 60.0, "schemastore": 180.0}
# Bytes of the tokens the generator prefers: closers end strings (a leading quote
# then only closing bytes) and containers, structural tokens open and separate
# them; whitespace-only tokens and escapes are avoided.
CLOSER_BYTES = frozenset(b'"]}')
STRUCTURAL_BYTES = frozenset(b'{}[]":,')
WHITESPACE_BYTES = frozenset(b" \t\n\r")
# Chance of taking a structural token, when one is allowed and no closer is.
STRUCTURAL_PREFERENCE = 0.5
# How much longer than the shortest allowed token a picked token may be.
SHORT_TOKEN_SLACK = 1
# Items listed in the Markdown output per list (the JSON report has them all).
LISTED = 40


# ---------------------------------------------------------------------------
# Paths and small helpers


def default_schemas_dir() -> Path | None:
    """`$MASKFORGE_SCHEMAS`, else `../shared/schemas` next to the repository when it exists."""
    if os.environ.get("MASKFORGE_SCHEMAS"):
        return Path(os.environ["MASKFORGE_SCHEMAS"])
    candidate = REPO_ROOT.parent / "shared" / "schemas"
    return candidate if candidate.is_dir() else None


def default_tokenizer() -> Path:
    """`$MASKFORGE_TOKENIZERS/llama3.tokenizer.json`, the folder defaulting to `../shared/tokenizers`."""
    folder = os.environ.get("MASKFORGE_TOKENIZERS") or str(REPO_ROOT.parent / "shared" / "tokenizers")
    return Path(folder) / "llama3.tokenizer.json"


def percentiles(values, points=(50, 99)) -> dict:
    """Nearest-rank percentiles and the maximum of a list of numbers (empty dict for no values)."""
    if len(values) == 0:
        return {}
    ordered = sorted(values)
    result = {}
    for point in points:
        rank = max(1, -(-point * len(ordered) // 100))  # ceil(point% of n), at least 1
        result[f"p{point}"] = ordered[rank - 1]
    result["max"] = ordered[-1]
    return result


def pct(part: int, whole: int) -> str:
    """A percentage with one decimal, or '-' for an empty whole."""
    return f"{100.0 * part / whole:.1f}" if whole else "-"


def fmt_ms(seconds) -> str:
    """Seconds as milliseconds with two decimals, or '-'."""
    return "-" if seconds is None else f"{seconds * 1e3:.2f}"


def fmt_us(seconds) -> str:
    """Seconds as microseconds with one decimal, or '-'."""
    return "-" if seconds is None else f"{seconds * 1e6:.1f}"


def short(text: str, limit: int = 160) -> str:
    """One line of at most `limit` characters, for tables."""
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def md_cell(text) -> str:
    """Text made safe for one Markdown table cell."""
    return str(text).replace("|", "\\|").replace("\n", " ")


def error_code(error: BaseException) -> str:
    """The diagnostic code of a MaskForge error, or its class name."""
    return getattr(error, "code", None) or type(error).__name__


def is_interrupt(error: BaseException) -> bool:
    """Ctrl-C and exits pass through; everything else (Rust panics included) is recorded."""
    return isinstance(error, (KeyboardInterrupt, SystemExit))


# ---------------------------------------------------------------------------
# Independent validator


def validator_for(schema, registry=None):
    """A `jsonschema` validator for the schema's `$schema` draft (default 2020-12), format checking on."""
    import jsonschema
    from jsonschema.validators import validator_for as pick

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # unknown `$schema` URIs fall back to the default, with a warning
        cls = pick(schema, default=jsonschema.Draft202012Validator)
    options = {"format_checker": cls.FORMAT_CHECKER}
    if registry is not None:
        options["registry"] = registry
    return cls(schema, **options)


def validate(validator, instance) -> tuple[str, str]:
    """('valid' | 'invalid' | 'error', first error message) for one parsed instance."""
    try:
        error = next(iter(validator.iter_errors(instance)), None)
    except BaseException as exc:  # unresolvable references, regexes Python cannot compile, recursion
        if is_interrupt(exc):
            raise
        return "error", short(f"{type(exc).__name__}: {exc}", 300)
    if error is None:
        return "valid", ""
    where = "/".join(str(part) for part in error.absolute_path)
    return "invalid", short(f"at /{where}: {error.message}", 300)


def checked_formats() -> list[str]:
    """Formats the installed `jsonschema` actually checks (some need optional packages)."""
    import jsonschema

    return sorted(jsonschema.Draft202012Validator.FORMAT_CHECKER.checkers)


# ---------------------------------------------------------------------------
# Per-process engine


class Engine:
    """The vocabulary, token classes and matcher one worker process uses.

    Built inside each worker (native objects are never shared across a fork).
    """

    def __init__(self, tokenizer: Path):
        import maskforge
        import numpy

        self.maskforge = maskforge
        self.np = numpy
        self.vocabulary = maskforge.Vocabulary.from_tokenizer_json(str(tokenizer))
        self.eos_ids = list(self.vocabulary.eos_token_ids)
        size = self.vocabulary.mask_vocab_size
        self.tokens = [self.vocabulary.token_bytes(i) for i in range(self.vocabulary.tokenizer_size)]
        self.tokens += [None] * (size - len(self.tokens))
        self.matcher = TokenMatcher(self.tokens)
        self.lengths = numpy.array([len(token) if token else 0 for token in self.tokens], dtype=numpy.int32)
        closer = self._class_of(CLOSER_BYTES)
        starts_with_quote = numpy.array([bool(token) and token[0] == 0x22 for token in self.tokens], dtype=bool)
        self.string_closer = closer & starts_with_quote
        self.container_closer = self._class_of(frozenset(b"]}"))
        self.quote_id = (self.matcher.ids_by_bytes.get(b'"') or [None])[0]
        self.has_backslash = numpy.array([bool(token) and 0x5C in token for token in self.tokens], dtype=bool)
        self.structural = self._class_of(STRUCTURAL_BYTES)
        self.whitespace = self._class_of(WHITESPACE_BYTES)
        self.eos_flags = numpy.zeros(size, dtype=bool)
        self.eos_flags[self.eos_ids] = True

    def _class_of(self, alphabet: frozenset):
        """Flags of the tokens whose bytes all lie in `alphabet`."""
        return self.np.array([bool(token) and all(b in alphabet for b in token) for token in self.tokens], dtype=bool)

    def allowed_ids(self, mask: bytearray):
        """Token ids whose bit is set in a packed mask."""
        bits = self.np.unpackbits(self.np.frombuffer(mask, dtype=self.np.uint8), bitorder="little")
        return self.np.flatnonzero(bits[: len(self.tokens)])


_ENGINE: Engine | None = None
_SHARED: dict = {}


# ---------------------------------------------------------------------------
# Mask-guided generation


class JsonTracker:
    """Follows generated JSON text byte by byte, enough to know when an object key begins.

    Tracks the container stack, whether the text is inside a string, whether that
    string is an object key, and the keys each open object already has.
    """

    def __init__(self):
        self.stack: list[dict] = []  # {"object": bool, "expect_key": bool, "keys": set}
        self.in_string = False
        self.string_is_key = False
        self.escape = False
        self.key = bytearray()

    def feed(self, data: bytes) -> None:
        """Advances over the bytes of one emitted token."""
        for byte in data:
            if self.in_string:
                if self.escape:
                    self.escape = False
                    self.key.append(byte)
                elif byte == 0x5C:  # backslash
                    self.escape = True
                    self.key.append(byte)
                elif byte == 0x22:  # closing quote
                    self.in_string = False
                    if self.string_is_key and self.stack:
                        self.stack[-1]["keys"].add(bytes(self.key))
                        self.stack[-1]["expect_key"] = False
                else:
                    self.key.append(byte)
            elif byte == 0x22:
                self.in_string = True
                top = self.stack[-1] if self.stack else None
                self.string_is_key = bool(top and top["object"] and top["expect_key"])
                self.key = bytearray()
            elif byte == 0x7B:  # {
                self.stack.append({"object": True, "expect_key": True, "keys": set()})
            elif byte == 0x5B:  # [
                self.stack.append({"object": False, "expect_key": False, "keys": set()})
            elif byte in (0x7D, 0x5D) and self.stack:  # } ]
                self.stack.pop()
            elif byte == 0x2C and self.stack and self.stack[-1]["object"]:  # ,
                self.stack[-1]["expect_key"] = True

    def expecting_key(self) -> bool:
        """Outside strings, where an object's next key (or its end) comes."""
        return not self.in_string and bool(self.stack) and self.stack[-1]["object"] and self.stack[-1]["expect_key"]

    def current_keys(self) -> set:
        """The keys (as written) of the innermost open object."""
        return self.stack[-1]["keys"] if self.stack else set()


def schema_key_names(schema) -> tuple[list[str], list[str]]:
    """Every name listed under `required` anywhere in the schema, then every `properties` name."""
    required: dict[str, None] = {}
    declared: dict[str, None] = {}
    pending = [schema]
    while pending:
        node = pending.pop()
        if isinstance(node, dict):
            names = node.get("required")
            if isinstance(names, list):
                required.update((name, None) for name in names if isinstance(name, str))
            properties = node.get("properties")
            if isinstance(properties, dict):
                declared.update((name, None) for name in properties)
            pending.extend(node.values())
        elif isinstance(node, list):
            pending.extend(node)
    return list(required), [name for name in declared if name not in required]


class Generator:
    """Picks one allowed token per step and records mask timings and inconsistencies."""

    def __init__(self, engine: Engine, bound, rng: random.Random, key_names: tuple[list[str], list[str]]):
        self.engine = engine
        self.bound = bound
        self.rng = rng
        # Property names as they appear between the quotes of a key (JSON-escaped, UTF-8).
        self.key_groups = [[json.dumps(name, ensure_ascii=False)[1:-1].encode("utf-8") for name in group]
                           for group in key_names]
        self.tracker = JsonTracker()
        self.target = b""  # bytes still to emit for a chosen object key (closing quote included)
        self.problems: list[str] = []

    def run(self, session, mask: bytearray, budget: int, first_mask: tuple[float, float]) -> dict:
        """Generates until EOS is taken or `budget` tokens were emitted.

        The first mask is already written; `first_mask` is its (wall, CPU) time.
        Every mask is timed in wall-clock seconds and in CPU seconds of this
        process (all its threads), the latter being steadier on a loaded machine.
        """
        engine = self.engine
        mask_times, mask_cpu = [first_mask[0]], [first_mask[1]]
        text = bytearray()
        completed = False
        dead_end = False
        steps = 0
        while True:
            token = self.choose(session, mask, len(text))
            if token is None:
                dead_end = True
                self.problems.append(f"byte {len(text)}: empty mask before EOS (dead end)")
                break
            if not session.is_allowed(token):
                self.problems.append(f"byte {len(text)}: mask allows token {token} but is_allowed is False")
            session.advance(token)
            steps += 1
            if engine.eos_flags[token]:
                completed = True
                if not session.is_finished():
                    self.problems.append("session not finished after EOS")
                break
            data = engine.tokens[token]
            text += data
            self.tracker.feed(data)
            if steps >= budget:
                break
            started, started_cpu = time.perf_counter(), time.process_time()
            session.write_mask(mask)
            mask_times.append(time.perf_counter() - started)
            mask_cpu.append(time.process_time() - started_cpu)
        return {
            "steps": steps,
            "completed": completed,
            "dead_end": dead_end,
            "text": bytes(text),
            "mask_times": mask_times,
            "mask_cpu": mask_cpu,
        }

    def choose(self, session, mask: bytearray, position: int):
        """The next token: EOS, a chosen key, a closer, a structural token or a short token."""
        engine = self.engine
        allowed = engine.allowed_ids(mask)
        accepting = session.is_accepting()
        eos_bits = [mask_bit(mask, eos) for eos in engine.eos_ids]
        if any(bit != accepting for bit in eos_bits):
            self.problems.append(f"byte {position}: EOS bits {eos_bits} but is_accepting {accepting}")
        if allowed.size == 0:
            return None
        if any(eos_bits):
            return engine.eos_ids[eos_bits.index(True)]
        usable = allowed[engine.lengths[allowed] > 0]
        if usable.size < allowed.size - int(engine.eos_flags[allowed].sum()):
            self.problems.append(f"byte {position}: mask allows a token without bytes that is not EOS")
        if usable.size == 0:
            return None
        key_token = self.key_token(mask)
        if key_token is not None:
            return key_token
        in_string = self.tracker.in_string
        closers = usable[(engine.string_closer if in_string else engine.container_closer)[usable]]
        if closers.size:
            return int(closers[self.rng.randrange(closers.size)])
        if self.tracker.expecting_key() and self.quote_allowed(mask):
            return engine.quote_id  # a bare quote, so that `key_token` writes the name
        if not in_string:
            structural = usable[engine.structural[usable]]
            if structural.size and self.rng.random() < STRUCTURAL_PREFERENCE:
                return int(structural[self.rng.randrange(structural.size)])
        plain = usable
        for avoided in (engine.whitespace, engine.has_backslash):
            kept = plain[~avoided[plain]]
            plain = kept if kept.size else plain
        lengths = engine.lengths[plain]
        shortest = plain[lengths <= lengths.min() + SHORT_TOKEN_SLACK]
        return int(shortest[self.rng.randrange(shortest.size)])

    def key_token(self, mask: bytearray):
        """The next token of a property name the schema mentions, while an object key is being written.

        Random key text almost never spells a required property, so inside a key a
        name from the schema that extends the key written so far and is not yet in
        the object is chosen (required names first, then the longest allowed next
        token); when the mask refuses its next token another name is tried.
        """
        if not (self.tracker.in_string and self.tracker.string_is_key) or self.tracker.escape:
            return None
        if self.target:
            found = self._matching_allowed(mask, self.target)
            if found is not None:
                self.target = self.target[found[0]:]
                return found[1]
        self.target = b""
        written = bytes(self.tracker.key)
        present = self.tracker.current_keys()
        for group in self.key_groups:
            options = []
            for encoded in group:
                if encoded.startswith(written) and encoded not in present:
                    rest = encoded[len(written):] + b'"'
                    found = self._matching_allowed(mask, rest)
                    if found is not None:
                        options.append((-found[0], self.rng.random(), rest, found))
            if options:
                _length, _tie, rest, (length, token_id) = min(options)
                self.target = rest[length:]
                return token_id
        return None

    def quote_allowed(self, mask: bytearray) -> bool:
        """Whether the mask allows the token that is a lone double quote."""
        quote = self.engine.quote_id
        return quote is not None and mask_bit(mask, quote)

    def _matching_allowed(self, mask: bytearray, target: bytes):
        """The longest allowed token that is a prefix of `target`, as (length, id), or None."""
        for length, token_id in self.engine.matcher.matches(target, 0):
            if mask_bit(mask, token_id):
                return length, token_id
        return None


# ---------------------------------------------------------------------------
# jsonschemabench: one schema


def bench_schema(task: dict, checkpoint) -> dict:
    """Compiles, binds and writes the first mask of one schema, then generates and validates an instance."""
    engine = _ENGINE
    maskforge = engine.maskforge
    path = Path(task["path"])
    result = {"subset": task["subset"], "file": path.name, "stage": "load"}
    schema_text = path.read_text(encoding="utf-8")
    try:
        schema = json.loads(schema_text)
    except ValueError as error:
        result.update(status="invalid_json", message=short(str(error)))
        return result
    result["stage"] = "compile"
    checkpoint(result)
    try:
        started, started_cpu = time.perf_counter(), time.process_time()
        program = maskforge.Compiler.without_cache().compile(schema_text)
        compiled = time.perf_counter()
        bound = program.bind(engine.vocabulary)
        session = bound.start_session()
        mask = bytearray(4 * bound.mask_word_count)
        bound_at, bound_cpu = time.perf_counter(), time.process_time()
        session.write_mask(mask)
        first_mask, first_mask_cpu = time.perf_counter(), time.process_time()
    except maskforge.SchemaError as error:
        result.update(status="rejected", code=error_code(error), keyword=getattr(error, "keyword", None),
                      pointer=getattr(error, "pointer", None), message=short(str(error), 300))
        return result
    except BaseException as error:
        if is_interrupt(error):
            raise
        result.update(status="crash", message=short(f"compile/bind raised {type(error).__name__}: {error}", 500))
        return result
    result.update(
        status="compiled",
        backend=program.backend,
        compile_s=compiled - started,
        bind_s=bound_at - compiled,
        first_mask_s=first_mask - bound_at,
        ttfm_s=first_mask - started,
        ttfm_cpu_s=first_mask_cpu - started_cpu,
    )
    result["stage"] = "generate"
    checkpoint(result)
    rng = random.Random(f"{task['seed']}:{task['subset']}/{path.name}")
    generator = Generator(engine, bound, rng, schema_key_names(schema))
    try:
        generation = generator.run(session, mask, task["budget"], (first_mask - bound_at, first_mask_cpu - bound_cpu))
    except BaseException as error:
        if is_interrupt(error):
            raise
        result.update(status="crash", message=short(f"session raised {type(error).__name__}: {error}", 500))
        result["problems"] = generator.problems
        return result
    text = generation.pop("text")
    result["generation"] = generation
    result["problems"] = generator.problems
    result["instance"] = text.decode("utf-8", errors="replace")
    if generation["completed"]:
        result["stage"] = "validate"
        checkpoint(result)
        result["validator"], result["validator_message"] = validate_generated(schema, text)
    result["stage"] = "done"
    return result


def validate_generated(schema, text: bytes) -> tuple[str, str]:
    """Validator verdict on a completed instance; text that is not JSON is itself a finding."""
    try:
        instance = json.loads(text.decode("utf-8"))
    except ValueError as error:
        return "not_json", short(f"{type(error).__name__}: {error}", 300)
    try:
        validator = validator_for(schema)
    except BaseException as error:
        if is_interrupt(error):
            raise
        return "error", short(f"validator construction failed: {type(error).__name__}: {error}", 300)
    return validate(validator, instance)


# ---------------------------------------------------------------------------
# schemastore: one schema


def store_schema(task: dict, checkpoint) -> dict:
    """Compiles one SchemaStore schema and feeds its positive and negative instances."""
    engine = _ENGINE
    maskforge = engine.maskforge
    path = Path(task["path"])
    result = {"name": task["name"], "schema": task["schema_file"], "skiptest": task["skiptest"], "stage": "compile",
              "instances": []}
    schema_text = path.read_text(encoding="utf-8")
    schema = json.loads(schema_text)
    deadline = time.monotonic() + task["instance_deadline_s"]
    checkpoint(result)
    try:
        started = time.perf_counter()
        compiler = maskforge.Compiler(executable_cache_bytes=0, trie_cache_bytes=0,
                                      format_assertion=task["format_assertion"],
                                      registry=_SHARED.get("documents"))
        program = compiler.compile(schema_text)
        bound = program.bind(engine.vocabulary)
        result["compile_bind_s"] = time.perf_counter() - started
    except maskforge.SchemaError as error:
        result.update(status="rejected", code=error_code(error), keyword=getattr(error, "keyword", None),
                      pointer=getattr(error, "pointer", None), message=short(str(error), 300))
    except BaseException as error:
        if is_interrupt(error):
            raise
        result.update(status="crash", message=short(f"compile/bind raised {type(error).__name__}: {error}", 500))
    else:
        result.update(status="compiled", backend=program.backend)
    result["stage"] = "instances"
    try:
        validator = validator_for(schema, _SHARED.get("registry"))
    except BaseException as error:
        if is_interrupt(error):
            raise
        validator, validator_error = None, short(f"{type(error).__name__}: {error}", 300)
    for label, instance in task["instances"]:
        record = {"label": label, "file": instance}
        result["instances"].append(record)
        checkpoint(result)
        instance_path = Path(task["root"]) / instance
        raw = instance_path.read_bytes()
        parsed = json.loads(raw, parse_float=Decimal)
        text = dumps(parsed).encode("utf-8")
        record["bytes"] = len(text)
        if validator is None:
            record["validator"], record["validator_message"] = "error", validator_error
        else:
            record["validator"], record["validator_message"] = validate(validator, json.loads(raw))
        if len(text) > task["max_instance_bytes"]:
            record["outcome"] = "too_large"
            continue
        if result["status"] != "compiled":
            record["outcome"] = "not_run"
            continue
        record.update(feed_instance(engine, bound, text, deadline))
        if record["outcome"] == "timeout":
            deadline = float("-inf")  # later instances of this schema are not attempted
    result["stage"] = "done"
    return result


class InstanceTimeout(Exception):
    """An instance was still being fed at the schema's deadline."""


def feed_instance(engine: Engine, bound, text: bytes, deadline: float) -> dict:
    """Feeds one instance token by token, then EOS, and records where it stopped.

    Each step takes the longest allowed token that is a prefix of the remaining
    bytes (the route `conformance.py` takes: it never misjudges a valid text,
    since a complete mask admits every token that stays on an accepted text, and
    an invalid text must never reach an admitted EOS by any route). At every step
    the mask's EOS bits must equal `is_accepting()` and the mask must not be empty,
    and each probed token's mask bit must equal `is_allowed`.
    """
    if time.monotonic() > deadline:
        return {"outcome": "timeout", "detail": "schema time budget spent before this instance"}
    started = time.perf_counter()
    session = bound.start_session()
    mask = bytearray(4 * bound.mask_word_count)
    problems: list[str] = []
    position = steps = 0
    try:
        while True:
            if time.monotonic() > deadline:
                raise InstanceTimeout
            check_mask(engine, session, mask, position, problems)
            if position == len(text):
                break
            token = choose_token(engine, session, mask, text, position, problems)
            if token is None:
                return _fed(False, f"refused at byte {position} (token {steps}): "
                                   f"{text[position:position + 32]!r}", problems, started)
            length, token_id = token
            session.advance(token_id)
            position += length
            steps += 1
        eos = engine.eos_ids[0]
        if not session.is_allowed(eos):
            return _fed(False, f"EOS refused after the whole text ({steps} tokens)", problems, started)
        session.advance(eos)
        if not session.is_finished():
            problems.append("session not finished after EOS")
    except InstanceTimeout:
        return {"outcome": "timeout", "detail": f"still running at the schema's time limit, at byte {position}"}
    except BaseException as error:
        if is_interrupt(error):
            raise
        return {"outcome": "crash", "detail": short(f"session raised {type(error).__name__}: {error}", 500)}
    return _fed(True, f"admitted with EOS ({steps} tokens)", problems, started)


def _fed(admitted: bool, detail: str, problems: list[str], started: float) -> dict:
    """The record of an instance that was fed to its end or to a refusal."""
    return {"outcome": "admitted" if admitted else "refused", "detail": detail, "problems": problems[:5],
            "seconds": round(time.perf_counter() - started, 3)}


def check_mask(engine: Engine, session, mask: bytearray, position: int, problems: list[str]) -> None:
    """Writes the mask and checks its EOS bits against `is_accepting` and that it is not empty."""
    session.write_mask(mask)
    accepting = session.is_accepting()
    for eos in engine.eos_ids:
        if mask_bit(mask, eos) != accepting:
            problems.append(f"byte {position}: EOS bit {not accepting} but is_accepting {accepting}")
    if not any(mask):
        problems.append(f"byte {position}: empty mask (dead end)")


# ---------------------------------------------------------------------------
# Worker processes with a per-task time limit


def _worker_main(connection, task_kind: str, tokenizer: str) -> None:
    """Worker loop: builds the engine, then runs each task it receives and sends back its result."""
    global _ENGINE
    warnings.simplefilter("ignore")
    if hasattr(sys, "set_int_max_str_digits"):
        sys.set_int_max_str_digits(0)
    _ENGINE = Engine(Path(tokenizer))
    run = {"jsonschemabench": bench_schema, "schemastore": store_schema}[task_kind]
    connection.send(("ready", None, None))
    while True:
        message = connection.recv()
        if message is None:
            return
        index, task = message

        def checkpoint(partial, index=index):
            connection.send(("partial", index, partial))

        try:
            result = run(task, checkpoint)
        except BaseException as error:
            if is_interrupt(error):
                raise
            result = dict(task.get("identity", {}))
            result.update(status="error", message=short(f"{type(error).__name__}: {error}", 500),
                          traceback=traceback.format_exc(limit=8))
        connection.send(("done", index, result))


@dataclass
class Worker:
    """A worker process, its pipe and the task it is running (index into the task list)."""

    process: multiprocessing.Process
    connection: object
    index: int | None = None
    started: float = 0.0
    partial: dict | None = None


def run_tasks(task_kind: str, tasks: list[dict], tokenizer: Path, jobs: int, timeout: float, on_result=None):
    """Runs every task in `jobs` worker processes; returns the results in task order.

    A task past `timeout` seconds has its worker killed and is recorded as a
    timeout (keeping what its last checkpoint reported); a worker that dies is
    recorded as a crash. Either way a fresh worker takes its place.
    """
    context = multiprocessing.get_context("fork")
    pending = deque(range(len(tasks)))
    results: list = [None] * len(tasks)
    done = 0
    workers: list[Worker] = []

    def spawn() -> Worker:
        parent, child = context.Pipe()
        process = context.Process(target=_worker_main, args=(child, task_kind, str(tokenizer)), daemon=True)
        process.start()
        child.close()
        return Worker(process, parent)

    def assign(worker: Worker) -> None:
        worker.index, worker.partial = None, None
        if pending:
            worker.index = pending.popleft()
            worker.started = time.monotonic()
            worker.connection.send((worker.index, tasks[worker.index]))

    def finish(worker: Worker, result: dict) -> None:
        nonlocal done
        results[worker.index] = result
        done += 1
        if on_result:
            on_result(done, len(tasks))

    def replace(worker: Worker, status: str, message: str) -> None:
        partial = dict(worker.partial or {})
        for key, value in tasks[worker.index].get("identity", {}).items():
            partial.setdefault(key, value)
        partial.setdefault("stage", "start")
        partial["status_before"] = partial.get("status")
        partial.update(status=status, message=message)
        finish(worker, partial)
        if worker.process.is_alive():
            worker.process.kill()
        worker.process.join()
        worker.connection.close()
        workers.remove(worker)
        if pending:
            workers.append(spawn())

    for _ in range(max(1, min(jobs, len(tasks)))):
        workers.append(spawn())
    while done < len(tasks):
        now = time.monotonic()
        waits = [w.started + timeout - now for w in workers if w.index is not None]
        ready = wait_for_connections([w.connection for w in workers], timeout=max(0.05, min(waits, default=1.0)))
        for worker in list(workers):
            if worker.connection not in ready:
                continue
            try:
                kind, index, payload = worker.connection.recv()
            except (EOFError, OSError):
                if worker.index is None:
                    raise RuntimeError("a worker process died before taking any task") from None
                worker.process.join(timeout=5)
                replace(worker, "crash", f"worker process died (exit code {worker.process.exitcode})")
                continue
            if kind == "ready":
                assign(worker)
            elif kind == "partial":
                worker.partial = payload
            else:
                finish(worker, payload)
                assign(worker)
        now = time.monotonic()
        for worker in list(workers):
            if worker.index is not None and now - worker.started > timeout:
                replace(worker, "timeout", f"still running after {timeout:g} s")
    for worker in workers:
        try:
            worker.connection.send(None)
        except (BrokenPipeError, OSError):
            pass
        worker.process.join(timeout=5)
        if worker.process.is_alive():
            worker.process.kill()
            worker.process.join()
    return results


def progress_printer(label: str):
    """A progress callback for stderr: a running counter on a terminal, a line per 100 results otherwise."""
    started = time.monotonic()
    terminal = sys.stderr.isatty()

    def show(done: int, total: int) -> None:
        if terminal and (done % 10 == 0 or done == total):
            print(f"\r{label}: {done}/{total}", end="" if done < total else "\n", file=sys.stderr, flush=True)
        elif not terminal and (done % 100 == 0 or done == total):
            print(f"{label}: {done}/{total} after {time.monotonic() - started:.0f} s", file=sys.stderr, flush=True)

    return show


# ---------------------------------------------------------------------------
# jsonschemabench: run and report


def bench_tasks(root: Path, limit: int | None, sample: int | None, seed: int, budget: int) -> list[dict]:
    """One task per schema file of every subset, optionally the first `limit` or a seeded sample."""
    tasks = []
    for subset in BENCH_SUBSETS:
        folder = root / "jsonschemabench" / subset
        if not folder.is_dir():
            continue
        files = sorted(folder.glob("*.json"))
        if sample is not None and sample < len(files):
            files = sorted(random.Random(f"{seed}:{subset}").sample(files, sample))
        if limit is not None:
            files = files[:limit]
        for path in files:
            tasks.append({"subset": subset, "path": str(path), "seed": seed, "budget": budget,
                          "identity": {"subset": subset, "file": path.name}})
    return tasks


def summarize_bench(results: list[dict]) -> dict:
    """Per-subset counts and timing percentiles, plus the rejection histograms and every finding."""
    subsets: dict = {}
    codes: dict = {}
    keywords: dict = {}
    findings = []
    series_names = ("ttfm", "ttfm_cpu", "mask", "mask_cpu")
    for result in results:
        subset = result["subset"]
        entry = subsets.setdefault(subset, {
            "schemas": 0, "compiled": 0, "rejected": 0, "timeouts": 0, "crashes": 0, "invalid_json": 0,
            "backends": Counter(), "series": {name: [] for name in series_names}, "generated": 0, "completed": 0,
            "validator_valid": 0, "validator_rejected": 0, "validator_errors": 0, "dead_ends": 0,
            "mask_problems": 0,
        })
        entry["schemas"] += 1
        status = result.get("status")
        if status == "rejected":
            entry["rejected"] += 1
            codes.setdefault(subset, Counter())[result["code"]] += 1
            keywords.setdefault(subset, Counter())[result.get("keyword") or "(none)"] += 1
        elif status == "timeout":
            entry["timeouts"] += 1
            findings.append(_bench_finding("timeout", result))
        elif status == "crash":
            entry["crashes"] += 1
            findings.append(_bench_finding("crash", result))
        elif status == "error":  # an exception in this script, not in MaskForge
            findings.append(_bench_finding("script_error", result))
        elif status == "invalid_json":
            entry["invalid_json"] += 1
        # A schema that compiled and then timed out or crashed while generating still counts as compiled.
        if status == "compiled" or result.get("status_before") == "compiled" or "ttfm_s" in result:
            entry["compiled"] += 1
            entry["backends"][result.get("backend", "?")] += 1
            entry["series"]["ttfm"].append(result["ttfm_s"])
            entry["series"]["ttfm_cpu"].append(result["ttfm_cpu_s"])
        generation = result.get("generation")
        if generation:
            entry["generated"] += 1
            entry["series"]["mask"].extend(generation["mask_times"])
            entry["series"]["mask_cpu"].extend(generation["mask_cpu"])
            entry["completed"] += generation["completed"]
            entry["dead_ends"] += generation["dead_end"]
        if result.get("problems"):
            entry["mask_problems"] += 1
            findings.append(_bench_finding("mask_problem", result))
        verdict = result.get("validator")
        if verdict == "valid":
            entry["validator_valid"] += 1
        elif verdict in ("invalid", "not_json"):
            entry["validator_rejected"] += 1
            findings.append(_bench_finding(f"validator_{verdict}", result))
        elif verdict == "error":
            entry["validator_errors"] += 1
    combined = {name: [] for name in series_names}
    for entry in subsets.values():
        series = entry.pop("series")
        entry["mask_count"] = len(series["mask"])
        for name, values in series.items():
            combined[name].extend(values)
            entry[f"{name}_s"] = percentiles(values)
        entry["backends"] = dict(entry["backends"])
    total = {key: sum(e[key] for e in subsets.values()) for key in (
        "schemas", "compiled", "rejected", "timeouts", "crashes", "invalid_json", "generated", "completed",
        "validator_valid", "validator_rejected", "validator_errors", "dead_ends", "mask_problems", "mask_count")}
    total.update((f"{name}_s", percentiles(values)) for name, values in combined.items())
    return {
        "subsets": {name: subsets[name] for name in BENCH_SUBSETS if name in subsets},
        "total": total,
        "codes": {subset: dict(counter) for subset, counter in codes.items()},
        "keywords": {subset: dict(counter) for subset, counter in keywords.items()},
        "findings": findings,
    }


def _bench_finding(kind: str, result: dict) -> dict:
    """One listed finding: where, what, and the generated instance when there is one."""
    record = {"kind": kind, "schema": f"jsonschemabench/{result['subset']}/{result['file']}"}
    for key in ("stage", "message", "validator_message", "instance", "problems", "traceback"):
        if result.get(key):
            record[key] = result[key]
    return record


def bench_markdown(report: dict) -> str:
    """The jsonschemabench tables: per subset, rejection histograms, findings."""
    summary = report["summary"]
    lines = [
        f"### JSONSchemaBench ({report['selection']}; tokenizer `{report['tokenizer']}`)",
        "",
        f"{report['jobs']} worker processes on {os.cpu_count()} CPUs, load average {report['load_average']}; "
        f"{report['elapsed_s']} s in all.",
        "",
        "Time to first mask (TTFM) = compile + bind + first mask with a fresh `Compiler.without_cache()`, in ms; "
        "per-token mask = each `write_mask` during mask-guided generation, in µs. "
        "*Val. rejected* = completed instances the `jsonschema` validator rejects (bug candidates).",
        "",
        "| Subset | Schemas | Compiled % | Rejected | Timeouts | Crashes | TTFM p50 | TTFM p99 | TTFM max "
        "| Mask p50 | Mask p99 | Mask max | Masks | Generated | Completed | Val. rejected |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    rows = list(summary["subsets"].items()) + [("**all**", summary["total"])]
    for name, e in rows:
        ttfm, masks = e["ttfm_s"], e["mask_s"]
        lines.append(
            f"| {name} | {e['schemas']} | {pct(e['compiled'], e['schemas'])} | {e['rejected']} | {e['timeouts']} "
            f"| {e['crashes']} | {fmt_ms(ttfm.get('p50'))} | {fmt_ms(ttfm.get('p99'))} | {fmt_ms(ttfm.get('max'))} "
            f"| {fmt_us(masks.get('p50'))} | {fmt_us(masks.get('p99'))} | {fmt_us(masks.get('max'))} "
            f"| {e['mask_count']} | {e['generated']} | {e['completed']} | {e['validator_rejected']} |"
        )
    lines += ["", "CPU time of the worker process (all its threads) for the same operations; on a shared machine "
                  "it is steadier than wall-clock time:", "",
              "| Subset | TTFM CPU p50 | TTFM CPU p99 | TTFM CPU max | Mask CPU p50 | Mask CPU p99 | Mask CPU max |",
              "|---|---:|---:|---:|---:|---:|---:|"]
    for name, e in rows:
        ttfm, masks = e["ttfm_cpu_s"], e["mask_cpu_s"]
        lines.append(f"| {name} | {fmt_ms(ttfm.get('p50'))} | {fmt_ms(ttfm.get('p99'))} | {fmt_ms(ttfm.get('max'))} "
                     f"| {fmt_us(masks.get('p50'))} | {fmt_us(masks.get('p99'))} | {fmt_us(masks.get('max'))} |")
    total = summary["total"]
    lines += ["", f"Validator verdicts on completed instances: {total['validator_valid']} valid, "
                  f"{total['validator_rejected']} rejected, {total['validator_errors']} validator errors "
                  f"(schemas python-jsonschema cannot evaluate). Dead ends: {total['dead_ends']}; "
                  f"schemas with mask inconsistencies: {total['mask_problems']}. "
                  f"Formats the validator checks: {', '.join(report['validator_formats'])}."]
    all_codes, all_keywords = Counter(), Counter()
    for counter in summary["codes"].values():
        all_codes.update(counter)
    for counter in summary["keywords"].values():
        all_keywords.update(counter)
    lines += ["", "Rejections by diagnostic code:", "", "| Code | " + " | ".join(summary["subsets"]) + " | all |",
              "|---|" + "---:|" * (len(summary["subsets"]) + 1)]
    for code, count in all_codes.most_common():
        cells = [str(summary["codes"].get(s, {}).get(code, 0)) for s in summary["subsets"]]
        lines.append(f"| {code} | " + " | ".join(cells) + f" | {count} |")
    lines += ["", "Rejections by keyword (all subsets): "
              + (", ".join(f"`{k}` {n}" for k, n in all_keywords.most_common()) or "none") + "."]
    lines += ["", *findings_markdown(summary["findings"])]
    return "\n".join(lines) + "\n"


def findings_markdown(findings: list[dict]) -> list[str]:
    """The findings as a table (the first `LISTED`; the JSON report has all)."""
    if not findings:
        return ["No findings: no timeouts, crashes, dead ends, mask inconsistencies or validator rejections."]
    lines = [f"**Findings ({len(findings)})**" + (f", first {LISTED}:" if len(findings) > LISTED else ":"), "",
             "| Kind | Schema | Detail | Instance |", "|---|---|---|---|"]
    for finding in findings[:LISTED]:
        detail = finding.get("validator_message") or finding.get("message") or "; ".join(finding.get("problems", []))
        if finding.get("stage"):
            detail = f"[{finding['stage']}] {detail}"
        lines.append(f"| {finding['kind']} | `{finding['schema']}` | {md_cell(short(detail, 200))} "
                     f"| {md_cell(short(repr(finding.get('instance', '')), 160))} |")
    return lines


def run_jsonschemabench(args, root: Path) -> int:
    """The `jsonschemabench` subcommand."""
    if not (root / "jsonschemabench").is_dir():
        sys.exit(f"no jsonschemabench/ folder under {root}")
    tasks = bench_tasks(root, args.limit, args.sample, args.seed, args.max_steps)
    load_before = os.getloadavg()
    started = time.perf_counter()
    results = run_tasks("jsonschemabench", tasks, args.tokenizer, args.jobs, args.timeout,
                        progress_printer("jsonschemabench"))
    elapsed = time.perf_counter() - started
    selection = "all schemas"
    if args.sample is not None:
        selection = f"seeded sample of {args.sample} per subset, seed {args.seed}"
    if args.limit is not None:
        selection += f", first {args.limit} per subset"
    report = {
        "corpus": str(root / "jsonschemabench"),
        "selection": selection,
        "tokenizer": args.tokenizer.name,
        "jobs": args.jobs,
        "timeout_s": args.timeout,
        "step_budget": args.max_steps,
        "seed": args.seed,
        "validator_formats": checked_formats(),
        "elapsed_s": round(elapsed, 1),
        "load_average": load_average(load_before),
        "summary": summarize_bench(results),
        "results": [{k: v for k, v in r.items() if k != "generation"} | _generation_brief(r) for r in results],
    }
    print(bench_markdown(report))
    print(f"{len(tasks)} schemas in {elapsed:.1f} s with {args.jobs} jobs")
    write_json(args.json, report)
    findings = report["summary"]["findings"]
    return 1 if any(f["kind"] != "timeout" for f in findings) else 0


def _generation_brief(result: dict) -> dict:
    """The generation record without its raw mask times (summarized instead)."""
    generation = result.get("generation")
    if not generation:
        return {}
    brief = {k: v for k, v in generation.items() if k not in ("mask_times", "mask_cpu")}
    brief["mask_s"] = percentiles(generation["mask_times"])
    brief["mask_cpu_s"] = percentiles(generation["mask_cpu"])
    return {"generation": brief}


def load_average(before: tuple) -> str:
    """The 1-minute load average before and after a run, as text for the report."""
    return f"{before[0]:.1f} before, {os.getloadavg()[0]:.1f} after"


def write_json(path: Path | None, report: dict) -> None:
    """Writes the full report as JSON when a path was given."""
    if path:
        path.write_text(json.dumps(report, indent=1, ensure_ascii=False, default=str) + "\n", encoding="utf-8")


# ---------------------------------------------------------------------------
# schemastore: run and report


def schemastore_documents(root: Path) -> dict[str, str]:
    """Every SchemaStore schema's text under its catalog URL, file name and `$id`.

    SchemaStore schemas refer to each other by catalog URL; both engines are
    served these documents (MaskForge through `Compiler(registry=...)`, the
    validator through `referencing`), so neither ever reaches the network.
    """
    documents = {}
    for path in sorted((root / "schemastore" / "schemas").glob("*.json")):
        text = path.read_text(encoding="utf-8")
        try:
            contents = json.loads(text)
        except ValueError:
            continue
        uris = {SCHEMASTORE_BASE + path.name, path.name}
        if isinstance(contents, dict):
            for key in ("$id", "id"):
                if isinstance(contents.get(key), str):
                    uris.add(contents[key].rstrip("#"))
        for uri in uris:
            documents[uri] = text
    return documents


def schemastore_registry(documents: dict[str, str]):
    """The documents as a `referencing` registry for the independent validator."""
    from referencing import Registry, Resource
    from referencing.jsonschema import DRAFT202012

    parsed = {}
    resources = {}
    for uri, text in documents.items():
        if text not in parsed:
            parsed[text] = Resource.from_contents(json.loads(text), default_specification=DRAFT202012)
        resources[uri] = parsed[text]
    return Registry().with_resources(resources.items())


def store_tasks(root: Path, args) -> tuple[list[dict], list[str]]:
    """One task per schema file: manifest entries with their instances, other schemas compile-only.

    Also returns the manifest entries whose schema is not in the snapshot (their instances cannot run).
    """
    store = root / "schemastore"
    manifest = json.loads((store / "manifest.json").read_text(encoding="utf-8"))
    by_file = {entry["schema"]: (name, entry) for name, entry in manifest.items() if entry.get("schema")}
    tasks = []
    for path in sorted((store / "schemas").glob("*.json")):
        relative = f"schemas/{path.name}"
        name, entry = by_file.get(relative, (path.stem, None))
        instances = []
        if entry:
            instances = [("positive", item["json"]) for item in entry.get("positive", [])]
            instances += [("negative", item["json"]) for item in entry.get("negative", [])]
        tasks.append({
            "name": name, "schema_file": relative, "path": str(path), "root": str(store),
            "in_manifest": entry is not None, "skiptest": bool(entry and entry.get("skiptest")),
            "instances": instances, "max_instance_bytes": args.max_instance_bytes,
            "format_assertion": args.format_assertion, "instance_deadline_s": args.timeout * 0.9,
            "identity": {"name": name, "schema": relative, "skiptest": bool(entry and entry.get("skiptest")),
                         "instances": []},
        })
    if args.match:
        tasks = [t for t in tasks if re.search(args.match, t["schema_file"])]
    if args.limit is not None:
        tasks = [t for t in tasks if t["in_manifest"]][: args.limit]
    missing = [name for name, entry in manifest.items()
               if not entry.get("schema") or not (store / entry["schema"]).exists()]
    return tasks, missing


def summarize_store(tasks: list[dict], results: list[dict]) -> dict:
    """Counts of schemas and instances, with failures and validator disagreements listed."""
    schemas = Counter()
    codes, keywords = Counter(), Counter()
    instances = {label: Counter() for label in ("positive", "negative")}
    failures, disagreements, schema_findings = [], [], []
    for task, result in zip(tasks, results):
        status = result.get("status")
        schemas["total"] += 1
        schemas[status] += 1
        if task["in_manifest"]:
            schemas["with_instances"] += 1
            schemas[f"with_instances_{status}"] += 1
        if status == "rejected":
            codes[result["code"]] += 1
            keywords[result.get("keyword") or "(none)"] += 1
        elif status in ("timeout", "crash", "error"):
            schema_findings.append({"kind": status, "schema": task["schema_file"], "stage": result.get("stage"),
                                    "message": result.get("message"), "traceback": result.get("traceback")})
        records = {record["file"]: record for record in result.get("instances", [])}
        for label, file in task["instances"]:
            counts = instances[label]
            counts["total"] += 1
            record = records.get(file) or {}
            # An instance without an outcome never ran: its schema was rejected, or timed out or
            # crashed before reaching it (listed once, as a schema finding).
            outcome = record.get("outcome") or "not_run"
            counts[outcome] += 1
            verdict = record.get("validator")
            counts[f"validator_{verdict}"] += 1
            expected = "valid" if label == "positive" else "invalid"
            disputed = verdict in ("valid", "invalid") and verdict != expected
            where = {"schema": task["schema_file"], "instance": file, "label": label,
                     "skiptest": task["skiptest"]}
            if disputed:
                disagreements.append(where | {"validator_message": record.get("validator_message"),
                                              "maskforge": outcome})
            if outcome in ("admitted", "refused"):
                counts["run"] += 1
                correct = (outcome == "admitted") == (label == "positive")
                if record.get("problems"):
                    failures.append(where | {"kind": "mask_problem", "detail": "; ".join(record["problems"])})
                    counts["mask_problems"] += 1
                if correct:
                    counts["correct"] += 1
                elif disputed:
                    counts["disputed_wrong"] += 1
                else:
                    counts["failed"] += 1
                    kind = "false_reject" if label == "positive" else "false_accept"
                    failures.append(where | {"kind": kind, "detail": record.get("detail"),
                                             "validator": verdict, "validator_message": record.get("validator_message")})
            elif outcome in ("timeout", "crash", "error"):
                failures.append(where | {"kind": outcome, "detail": record.get("detail") or result.get("message")})
    return {
        "schemas": dict(schemas),
        "codes": dict(codes.most_common()),
        "keywords": dict(keywords.most_common()),
        "instances": {label: dict(counter) for label, counter in instances.items()},
        "failures": failures,
        "schema_findings": schema_findings,
        "validator_disagreements": disagreements,
    }


def store_markdown(report: dict) -> str:
    """The schemastore tables: schemas, instances, failures, validator disagreements."""
    s = report["summary"]
    sc = s["schemas"]
    pos, neg = s["instances"]["positive"], s["instances"]["negative"]
    lines = [
        f"### SchemaStore ({report['selection']}; tokenizer `{report['tokenizer']}`, "
        f"format_assertion={report['format_assertion']}, instance cap {report['max_instance_bytes']} bytes)",
        "",
        f"{report['jobs']} worker processes on {os.cpu_count()} CPUs, load average {report['load_average']}; "
        f"{report['elapsed_s']} s in all. Manifest entries without a schema file in the snapshot: "
        f"{', '.join(report['manifest_schemas_missing']) or 'none'}.",
        "",
        "| Schemas | Total | Compiled | Compiled % | Rejected | Timeouts | Crashes |",
        "|---|---:|---:|---:|---:|---:|---:|",
        f"| all files | {sc.get('total', 0)} | {sc.get('compiled', 0)} | {pct(sc.get('compiled', 0), sc.get('total', 0))} "
        f"| {sc.get('rejected', 0)} | {sc.get('timeout', 0)} | {sc.get('crash', 0)} |",
        f"| with instances (manifest) | {sc.get('with_instances', 0)} | {sc.get('with_instances_compiled', 0)} "
        f"| {pct(sc.get('with_instances_compiled', 0), sc.get('with_instances', 0))} "
        f"| {sc.get('with_instances_rejected', 0)} | {sc.get('with_instances_timeout', 0)} "
        f"| {sc.get('with_instances_crash', 0)} |",
        "",
        "| Instances | Total | Run | Correct | Failed | Wrong but label disputed | Not run "
        "| Too large | Timeouts | Validator agrees with label |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for label, counts, verdict in (("positive (admitted)", pos, "valid"), ("negative (refused)", neg, "invalid")):
        lines.append(
            f"| {label} | {counts.get('total', 0)} | {counts.get('run', 0)} | {counts.get('correct', 0)} "
            f"| {counts.get('failed', 0)} | {counts.get('disputed_wrong', 0)} | {counts.get('not_run', 0)} "
            f"| {counts.get('too_large', 0)} | {counts.get('timeout', 0)} "
            f"| {counts.get('validator_' + verdict, 0)} / {counts.get('total', 0)} |"
        )
    lines += ["", "Rejections by code: " + (", ".join(f"{c} {n}" for c, n in s["codes"].items()) or "none")
              + ". By keyword: " + (", ".join(f"`{k}` {n}" for k, n in s["keywords"].items()) or "none") + "."]
    failures = s["failures"] + s["schema_findings"]
    lines += ["", f"**Failures ({len(failures)})**" + (f", first {LISTED}:" if len(failures) > LISTED else ":")]
    if failures:
        lines += ["", "| Kind | Schema | Instance | Where it diverged | Validator |", "|---|---|---|---|---|"]
        for failure in failures[:LISTED]:
            lines.append(
                f"| {failure['kind']} | `{failure['schema']}` | `{failure.get('instance', '-')}` "
                f"| {md_cell(short(failure.get('detail') or failure.get('message') or '', 160))} "
                f"| {md_cell(short(failure.get('validator', '') + ' ' + (failure.get('validator_message') or ''), 120))} |"
            )
    disagreements = s["validator_disagreements"]
    lines += ["", f"**Validator disagrees with the label ({len(disagreements)})**"
              + (f", first {LISTED}:" if len(disagreements) > LISTED else ":")]
    if disagreements:
        lines += ["", "| Schema | Instance | Label | MaskForge | Validator says |", "|---|---|---|---|---|"]
        for item in disagreements[:LISTED]:
            lines.append(f"| `{item['schema']}` | `{item['instance']}` | {item['label']} | {item['maskforge']} "
                         f"| {md_cell(short(item.get('validator_message') or '', 140))} |")
    return "\n".join(lines) + "\n"


def run_schemastore(args, root: Path) -> int:
    """The `schemastore` subcommand."""
    store = root / "schemastore"
    if not (store / "manifest.json").is_file():
        sys.exit(f"no schemastore/manifest.json under {root}")
    tasks, missing = store_tasks(root, args)
    # Built before the workers fork, shared read-only.
    _SHARED["documents"] = schemastore_documents(root)
    _SHARED["registry"] = schemastore_registry(_SHARED["documents"])
    load_before = os.getloadavg()
    started = time.perf_counter()
    results = run_tasks("schemastore", tasks, args.tokenizer, args.jobs, args.timeout,
                        progress_printer("schemastore"))
    elapsed = time.perf_counter() - started
    report = {
        "corpus": str(store),
        "selection": ("all schemas" if args.limit is None else f"first {args.limit} schemas with instances")
        + (f" whose file name matches {args.match!r}" if args.match else ""),
        "tokenizer": args.tokenizer.name,
        "format_assertion": args.format_assertion,
        "max_instance_bytes": args.max_instance_bytes,
        "jobs": args.jobs,
        "timeout_s": args.timeout,
        "validator_formats": checked_formats(),
        "manifest_schemas_missing": missing,
        "elapsed_s": round(elapsed, 1),
        "load_average": load_average(load_before),
        "summary": summarize_store(tasks, results),
        "results": results,
    }
    print(store_markdown(report))
    print(f"{len(tasks)} schemas in {elapsed:.1f} s with {args.jobs} jobs")
    write_json(args.json, report)
    return 1 if report["summary"]["failures"] or report["summary"]["schema_findings"] else 0


# ---------------------------------------------------------------------------
# Command line


def main(argv=None) -> int:
    """Parses the command line and runs one subcommand; the exit status is 1 when something failed."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    for name, help_text in (("jsonschemabench", "coverage and mask speed on JSONSchemaBench"),
                            ("schemastore", "SchemaStore schemas with their positive and negative instances")):
        sub = commands.add_parser(name, help=help_text)
        sub.add_argument("--schemas", type=Path, default=default_schemas_dir(),
                         help="folder holding jsonschemabench/ and schemastore/ (default: $MASKFORGE_SCHEMAS "
                              "or ../shared/schemas)")
        sub.add_argument("--tokenizer", type=Path, default=default_tokenizer(),
                         help="Hugging Face tokenizer.json (default: $MASKFORGE_TOKENIZERS/llama3.tokenizer.json)")
        sub.add_argument("--limit", type=int, help="run only the first N schemas (per subset for jsonschemabench)")
        sub.add_argument("--jobs", type=int, default=2, help="worker processes (default 2)")
        sub.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT[name],
                         help=f"seconds per schema (default {DEFAULT_TIMEOUT[name]:g})")
        sub.add_argument("--json", type=Path, help="write the full report here")
        if name == "jsonschemabench":
            sub.add_argument("--sample", type=int, help="a seeded random sample of N schemas per subset")
            sub.add_argument("--seed", type=int, default=0, help="seed of the sample and of generation (default 0)")
            sub.add_argument("--max-steps", type=int, default=DEFAULT_STEP_BUDGET,
                             help=f"token budget of each generated instance (default {DEFAULT_STEP_BUDGET})")
        else:
            sub.add_argument("--max-instance-bytes", type=int, default=DEFAULT_INSTANCE_BYTES,
                             help=f"skip (and count) instances larger than this (default {DEFAULT_INSTANCE_BYTES})")
            sub.add_argument("--match", help="run only the schemas whose file name matches this regular expression")
            sub.add_argument("--no-format-assertion", dest="format_assertion", action="store_false",
                             help="compile with format as an annotation (default: formats asserted, as "
                                  "SchemaStore's own tests do)")
    args = parser.parse_args(argv)
    if args.schemas is None or not args.schemas.is_dir():
        sys.exit("schema corpora not found: pass --schemas DIR or set MASKFORGE_SCHEMAS "
                 "(a folder with jsonschemabench/ and schemastore/)")
    if not args.tokenizer.is_file():
        sys.exit(f"tokenizer not found: {args.tokenizer} (pass --tokenizer or set MASKFORGE_TOKENIZERS)")
    if hasattr(sys, "set_int_max_str_digits"):
        sys.set_int_max_str_digits(0)
    if args.command == "jsonschemabench":
        return run_jsonschemabench(args, args.schemas)
    return run_schemastore(args, args.schemas)


if __name__ == "__main__":
    sys.exit(main())

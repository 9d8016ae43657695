#!/usr/bin/env python3
"""MaskForge, llguidance, XGrammar and outlines-core on the same schemas, tokenizer and instances.

Two corpora (`--corpus`), both under ../shared/schemas (or `--schemas`):

`schemastore` (default)
    Every SchemaStore schema with instances, with its positive and negative instances.
`jsonschemabench`
    JSONSchemaBench schemas (all, or `--sample N --seed S` per subset: the same seeded draw as
    `schema_corpora.py jsonschemabench`). Valid instances are drawn with hypothesis-jsonschema
    (`from_schema` run under Hypothesis `@given` with `@seed(S)`, no example database and the
    generate phase only, so a draw is reproducible with the same Hypothesis versions) and kept
    only when python-jsonschema accepts them (the schema's `$schema` draft, default 2020-12,
    format checking on, as `schema_corpora.py` does; both read `pattern` regexes with re.ASCII,
    so `\\d` and `\\w` keep their ECMA-262 meaning); of the distinct valid ones, `--valid` are
    kept spread from the smallest to the largest. Invalid instances are mutations of the valid
    ones (a key dropped, a value of another type, an extra key, a value pushed off its enum or
    range) kept only when the validator rejects them. Instances go to a JSON cache
    (`--instances-cache`, default `<out>.instances.json`) that reruns and every engine read, so
    all engines see the very same instances. Generation has a time limit per schema
    (`--generation-timeout`); a schema whose generation fails, times out or yields no valid
    instance is recorded in the cache as "no instances" and skipped (which schemas pass the time
    limit depends on the machine; the cache is what makes a run repeatable).

Each engine compiles the schema and then reads each positive and negative instance token by
token: at every step it writes its mask, the instance's next token must be allowed, and the
engine consumes it; at the end EOS must be allowed. A positive instance counts as admitted when
every token and EOS were allowed; a negative one as refused when some token or EOS was not.
EOS is the tokenizer's `<|end_of_text|>`, `<|endoftext|>`, `<|im_end|>` or `</s>`, the first
present, unless `--eos-token-id` is given.

Each engine runs in its own worker process (one schema at a time, with a time limit; a worker
that hangs or dies is replaced and the schema recorded as a timeout or crash). Memory: the
parent reads each worker's resident size (VmRSS in /proc/PID/status) several times a second and
kills a worker past `--memory-limit-mb`, recording the schema as "memory". An address-space
limit (RLIMIT_AS) in the worker is not used: it counts mappings rather than memory, and
XGrammar's worker imports torch (a CUDA build), which maps about 3.8 GB of address space at
start-up with 0.7 GB resident, so one RLIMIT_AS would leave XGrammar 3 GB less room than the
others. A MemoryError raised inside a worker is recorded as "memory" too; a worker that dies
otherwise is a "crash", with the end of its stderr in the record. Peak memory is the worker's
peak resident size.

Results are appended to a JSON-lines file, one line per (engine, schema) with the tokenizer,
EOS and corpus in each line, so an interrupted run resumes where it stopped (a results file
holds one tokenizer and one corpus). Instances are written compactly
(`json.dumps(..., separators=(",", ":"))`), so engines that restrict whitespace are not
penalised, and tokenized as plain text (a key spelled like a special token gets ordinary tokens).

Time to first mask = compile + bind/matcher creation + first mask (engines that compile lazily
pay there). Per-token mask time covers every later mask. Engine settings: MaskForge with the
catalog served through `registry=`; llguidance's JSON schema grammar with its defaults; XGrammar
`compile_json_schema(any_whitespace=True, strict_mode=False)` (JSON Schema's own semantics for
unlisted properties); outlines-core's `build_regex_from_schema` with its default whitespace.

The report gives, per engine: schemas compiled, errors, timeouts, crashes, memory-limit kills;
valid instances admitted and invalid ones refused; time to first mask p50/p90/p99/max; per-token
mask time p50/p99/max/mean over every mask, over the matched set (schemas every engine compiles
and gets right on every instance), and MaskForge's over the schemas only it compiles.

    python integration/cross_engine.py run --out results.jsonl [--engines ...] [--match TEXT] [--limit N]
        [--tokenizer PATH] [--timeout S] [--memory-limit-mb MB]
    python integration/cross_engine.py run --corpus jsonschemabench --sample 10 --seed 0 --out bench.jsonl
        [--instances-cache bench.instances.json] [--generation-timeout S]
    python integration/cross_engine.py report results.jsonl [--markdown]

Needs the optional benchmark dependencies (pip install '.[bench]': llguidance, xgrammar,
outlines-core, and hypothesis-jsonschema for the JSONSchemaBench instances).
"""

from __future__ import annotations

import argparse
import copy
import gc
import json
import multiprocessing as mp
import os
import queue
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Tuple

sys.path.insert(0, str(Path(__file__).resolve().parent))
from schema_corpora import (  # noqa: E402  (sibling script, imported for its helpers)
    bench_tasks,
    default_schemas_dir,
    default_tokenizer,
    schemastore_documents,
    validate,
    validator_for,
)

ENGINES = ["maskforge", "llguidance", "xgrammar", "outlines-core"]


# ---------------------------------------------------------------------------
# engines: compile(schema_text) -> matcher; matcher.mask() -> allowed(token) check; consume


class Engine:
    """One engine over one tokenizer. `compile(schema_text)` does the engine's compile and bind
    and returns a factory of matchers; a matcher's `allowed(token)` writes the mask, then reads
    one bit, and `consume(token)` advances."""

    def __init__(self, tokenizer_path: Path, eos: int, documents: Dict[str, str]):
        import numpy as np

        self.np = np
        self.eos = eos
        self.documents = documents


def bit(mask, token: int) -> bool:
    return bool(int(mask.reshape(-1)[token >> 5]) >> (token & 31) & 1)


class MaskForgeEngine(Engine):
    def __init__(self, tokenizer_path, eos, documents):
        super().__init__(tokenizer_path, eos, documents)
        import maskforge

        self.maskforge = maskforge
        self.vocabulary = maskforge.Vocabulary.from_tokenizer_json(tokenizer_path, eos_token_id=eos)

    def compile(self, schema_text: str):
        compiler = self.maskforge.Compiler(executable_cache_bytes=0, trie_cache_bytes=0, registry=self.documents)
        bound = compiler.compile(schema_text).bind(self.vocabulary)
        np = self.np

        class Matcher:
            def __init__(self):
                self.session = bound.start_session()
                self.mask = np.zeros(bound.mask_word_count, dtype=np.int32)

            def allowed(self, token: int) -> bool:
                self.session.write_mask(self.mask)
                return bit(self.mask, token)

            def consume(self, token: int) -> None:
                self.session.advance(token)

        return Matcher


class LLGuidanceEngine(Engine):
    def __init__(self, tokenizer_path, eos, documents):
        super().__init__(tokenizer_path, eos, documents)
        import llguidance
        import llguidance.hf
        import llguidance.numpy
        from transformers import PreTrainedTokenizerFast

        self.llguidance = llguidance
        hf = PreTrainedTokenizerFast(tokenizer_file=str(tokenizer_path))
        self.tokenizer = llguidance.hf.from_tokenizer(hf, eos_token=eos)

    def compile(self, schema_text: str):
        llg, tokenizer = self.llguidance, self.tokenizer
        grammar = llg.LLMatcher.grammar_from_json_schema(schema_text)
        first = llg.LLMatcher(tokenizer, grammar)
        if first.is_error():
            raise ValueError(first.get_error())
        made = [first]

        class Matcher:
            def __init__(self):
                self.matcher = made.pop() if made else llg.LLMatcher(tokenizer, grammar)
                self.mask = llg.numpy.allocate_token_bitmask(1, tokenizer.vocab_size)

            def allowed(self, token: int) -> bool:
                llg.numpy.fill_next_token_bitmask(self.matcher, self.mask, 0)
                return bit(self.mask, token)

            def consume(self, token: int) -> None:
                if not self.matcher.consume_token(token):
                    raise ValueError(self.matcher.get_error())

        return Matcher


class XGrammarEngine(Engine):
    def __init__(self, tokenizer_path, eos, documents):
        super().__init__(tokenizer_path, eos, documents)
        import xgrammar
        from transformers import PreTrainedTokenizerFast

        self.xgrammar = xgrammar
        hf = PreTrainedTokenizerFast(tokenizer_file=str(tokenizer_path))
        self.info = xgrammar.TokenizerInfo.from_huggingface(hf, stop_token_ids=[eos])
        self.compiler = xgrammar.GrammarCompiler(self.info, cache_enabled=False)

    def compile(self, schema_text: str):
        xgr, info = self.xgrammar, self.info
        compiled = self.compiler.compile_json_schema(schema_text, any_whitespace=True, strict_mode=False)

        class Matcher:
            def __init__(self):
                self.matcher = xgr.GrammarMatcher(compiled)
                self.mask = xgr.allocate_token_bitmask(1, info.vocab_size)

            def allowed(self, token: int) -> bool:
                self.matcher.fill_next_token_bitmask(self.mask)
                return bit(self.mask, token)

            def consume(self, token: int) -> None:
                if not self.matcher.accept_token(token):
                    raise ValueError("token not accepted")

        return Matcher


class OutlinesCoreEngine(Engine):
    def __init__(self, tokenizer_path, eos, documents):
        super().__init__(tokenizer_path, eos, documents)
        import maskforge
        import outlines_core

        self.outlines_core = outlines_core
        vocabulary = maskforge.Vocabulary.from_tokenizer_json(tokenizer_path, eos_token_id=eos)
        tokens: Dict[bytes, List[int]] = {}
        for token in range(vocabulary.tokenizer_size):
            piece = vocabulary.token_bytes(token)
            if piece is not None and token != eos:
                tokens.setdefault(piece, []).append(token)
        self.vocabulary = outlines_core.Vocabulary(eos, tokens)
        self.words = (vocabulary.mask_vocab_size + 31) // 32

    def compile(self, schema_text: str):
        from outlines_core.json_schema import build_regex_from_schema

        oc, np, words = self.outlines_core, self.np, self.words
        index = oc.Index(build_regex_from_schema(schema_text), self.vocabulary)

        class Matcher:
            def __init__(self):
                self.guide = oc.Guide(index)
                self.mask = np.zeros(words, dtype=np.int32)

            def allowed(self, token: int) -> bool:
                self.guide.write_mask_into(self.mask.ctypes.data, self.mask.size, 4)
                return bit(self.mask, token)

            def consume(self, token: int) -> None:
                self.guide.advance(token, return_tokens=False)

        return Matcher


ENGINE_CLASSES = {"maskforge": MaskForgeEngine, "llguidance": LLGuidanceEngine, "xgrammar": XGrammarEngine,
                  "outlines-core": OutlinesCoreEngine}


# ---------------------------------------------------------------------------
# one schema in a worker


def instance_value(instance: Dict[str, Any]) -> Any:
    """The instance's JSON value: inline (generated instances) or read from its file (SchemaStore)."""
    if "value" in instance:
        return instance["value"]
    return json.loads(Path(instance["path"]).read_text(encoding="utf-8"))


def compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def run_schema(engine: Engine, encode, task: Dict[str, Any]) -> Dict[str, Any]:
    # As timeit does, the cyclic garbage collector stays out of the timed windows: the matcher
    # classes built per schema form cycles, and collecting the previous schema's engine objects
    # (freeing its compiled grammar) would otherwise land inside this schema's timings.
    gc.collect()
    gc.disable()
    try:
        return timed_run(engine, encode, task)
    finally:
        gc.enable()


def timed_run(engine: Engine, encode, task: Dict[str, Any]) -> Dict[str, Any]:
    record: Dict[str, Any] = {"schema": task["schema"], "instances": []}
    schema_text = Path(task["path"]).read_text(encoding="utf-8")
    texts = [(i["label"], i.get("mutation"), encode(compact(instance_value(i)))) for i in task["instances"]]
    started = time.perf_counter()
    try:
        compiled = engine.compile(schema_text)
        matcher = compiled()
        matcher.allowed(engine.eos)  # the first mask
    except MemoryError:
        record.update(status="memory", message="MemoryError while compiling")
        return record
    except Exception as error:  # noqa: BLE001  (any refusal to compile is the finding)
        record.update(status="error", message=f"{type(error).__name__}: {str(error)[:300]}")
        return record
    record["ttfm_s"] = time.perf_counter() - started
    record["status"] = "compiled"
    mask_times: List[float] = []
    for label, mutation, tokens in texts:
        matcher = compiled() if record["instances"] else matcher
        admitted, stopped_at = True, None
        try:
            for step, token in enumerate(tokens + [engine.eos]):
                started = time.perf_counter()
                allowed = matcher.allowed(token)
                mask_times.append(time.perf_counter() - started)
                if not allowed:
                    admitted, stopped_at = False, step
                    break
                if token != engine.eos:
                    matcher.consume(token)
        except MemoryError:
            record.update(status="memory", message="MemoryError while masking", instances=[])
            return record
        except Exception as error:  # noqa: BLE001
            record["instances"].append({"label": label, "outcome": "error", "message": str(error)[:200]})
            continue
        correct = admitted == (label == "positive")
        outcome = {"label": label, "outcome": "correct" if correct else "wrong", "tokens": len(tokens)}
        if mutation:
            outcome["mutation"] = mutation
        if stopped_at is not None:
            outcome["refused_at"] = stopped_at  # == tokens: EOS refused at the end
        record["instances"].append(outcome)
    record["mask_s"] = mask_times
    record["max_rss_kb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return record


def worker(name: str, tokenizer_path: str, eos: int, documents: Dict[str, str], stderr_path: str,
           tasks, results) -> None:
    # The worker's stderr goes to a file so that an abort message (a Rust allocation failure,
    # a C++ assertion) can be quoted in the crash record.
    descriptor = os.open(stderr_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(descriptor, 2)
    os.close(descriptor)
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(tokenizer_path)
    # Instances are text: a key such as "<|endoftext|>" is spelled with ordinary tokens, never
    # read as the special token.
    tokenizer.encode_special_tokens = True
    engine = ENGINE_CLASSES[name](Path(tokenizer_path), eos, documents)
    encode = lambda text: tokenizer.encode(text, add_special_tokens=False).ids  # noqa: E731
    results.put({"ready": name})
    while True:
        task = tasks.get()
        if task is None:
            return
        results.put(run_schema(engine, encode, task))


# ---------------------------------------------------------------------------
# worker supervision: time and memory limits


def resident_kb(pid: int) -> int:
    """The process's resident set size in KiB (0 once it is gone)."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


# How often the parent reads a worker's resident size: a worker is killed at most this long
# after it passes the memory limit.
MEMORY_POLL_S = 0.1


def wait_for_result(process, results, timeout: float, memory_limit_mb: Optional[int] = None
                    ) -> Tuple[Optional[Dict[str, Any]], str]:
    """(the worker's record, "") or (None, why): "timeout" past `timeout` seconds (engine set-up
    included on a fresh worker, which loads its tokenizer first), "memory" once its resident size
    passes `memory_limit_mb`, "crash" when it died."""
    deadline = time.monotonic() + timeout
    limit_kb = memory_limit_mb * 1024 if memory_limit_mb else None
    while True:
        try:
            return results.get(timeout=MEMORY_POLL_S), ""
        except queue.Empty:
            pass
        if not process.is_alive():
            try:  # a record written just before the worker exited
                return results.get(timeout=0.5), ""
            except queue.Empty:
                return None, "crash"
        if limit_kb and resident_kb(process.pid) > limit_kb:
            return None, "memory"
        if time.monotonic() > deadline:
            return None, "timeout"


def tail_of(path: str, size: int = 600) -> str:
    try:
        data = Path(path).read_bytes()[-size:]
    except OSError:
        return ""
    return " ".join(data.decode("utf-8", errors="replace").split())


# ---------------------------------------------------------------------------
# corpora


def schemastore_tasks(root: Path, match: Optional[str], limit: Optional[int]) -> List[Dict[str, Any]]:
    store = root / "schemastore"
    manifest = json.loads((store / "manifest.json").read_text(encoding="utf-8"))
    tasks = []
    for name, entry in sorted(manifest.items()):
        path = store / (entry.get("schema") or "missing")
        if not entry.get("schema") or not path.is_file() or (match and match not in path.name):
            continue
        instances = [{"label": "positive", "path": str(store / i["json"])} for i in entry.get("positive", [])]
        instances += [{"label": "negative", "path": str(store / i["json"])} for i in entry.get("negative", [])]
        tasks.append({"schema": entry["schema"], "path": str(path), "instances": instances})
    return tasks[:limit] if limit else tasks


# Generated instances: distinct examples Hypothesis draws per schema, the largest compact size
# kept (long instances only add mask steps), and how many mutations are validated per schema.
GENERATED_EXAMPLES = 40
MAX_INSTANCE_BYTES = 4000
MAX_MUTATION_CHECKS = 300
# Nodes of an instance (pre-order) that mutations touch, so huge instances stay cheap.
MUTATED_NODES = 40
MUTATION_KINDS = ("drop-key", "wrong-type", "extra-key", "off-enum-or-range")
# A key schemas are unlikely to name; adding it breaks `additionalProperties: false`.
EXTRA_KEY = "x-unlisted-key"


# Keywords whose value maps names to subschemas (a name may itself be "pattern"), and keywords
# whose value is data rather than schemas.
SCHEMA_MAPS = ("properties", "$defs", "definitions", "dependentSchemas")
DATA_KEYWORDS = ("enum", "const", "default", "examples", "required")


def ascii_patterns(schema: Any) -> Any:
    """The schema with every `pattern` and `patternProperties` regex read with re.ASCII.

    JSON Schema regexes are ECMA-262, where `\\d`, `\\w` and `\\b` are ASCII classes; Python's
    `re`, which both hypothesis-jsonschema and python-jsonschema use, reads them as Unicode
    classes, so `^\\d+$` would admit "٣" for both and the instance would be labelled valid
    wrongly. The inline flag `(?a)` gives them the ECMA-262 meaning. Engines get the schema as is."""
    if isinstance(schema, list):
        return [ascii_patterns(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    result = {}
    for key, value in schema.items():
        if key == "pattern" and isinstance(value, str):
            result[key] = "(?a)" + value
        elif key == "patternProperties" and isinstance(value, dict):
            result[key] = {"(?a)" + name: ascii_patterns(sub) for name, sub in value.items()}
        elif key in SCHEMA_MAPS and isinstance(value, dict):
            result[key] = {name: ascii_patterns(sub) for name, sub in value.items()}
        elif key in DATA_KEYWORDS:
            result[key] = value
        else:
            result[key] = ascii_patterns(value)
    return result


def draw_examples(schema: Any, seed: int, count: int) -> List[Any]:
    """Up to `count` values hypothesis-jsonschema draws for the schema, reproducibly: `@seed`
    fixes Hypothesis's random source, there is no example database to replay from, and only the
    generate phase runs (no shrinking, whose path depends on earlier failures)."""
    from hypothesis import HealthCheck, Phase, Verbosity, given, settings
    from hypothesis import seed as fixed_seed
    from hypothesis_jsonschema import from_schema

    strategy = from_schema(schema)
    drawn: List[Any] = []

    @fixed_seed(seed)
    @settings(max_examples=count, database=None, deadline=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck), verbosity=Verbosity.quiet)
    @given(strategy)
    def collect(value):
        drawn.append(value)

    collect()
    return drawn


def spread(items: List[Any], count: int) -> List[Any]:
    """`count` items evenly spaced over the list, its first and last included."""
    if len(items) <= count:
        return list(items)
    if count == 1:
        return [items[0]]
    return [items[round(i * (len(items) - 1) / (count - 1))] for i in range(count)]


def nodes(value: Any, path: Tuple = ()) -> Iterator[Tuple[Tuple, Any]]:
    """(path, node) of every node of a JSON value, pre-order."""
    yield path, value
    if isinstance(value, dict):
        for key, child in value.items():
            yield from nodes(child, path + (key,))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield from nodes(child, path + (index,))


def replaced(root: Any, path: Tuple, new: Any) -> Any:
    """A copy of `root` with the node at `path` replaced by `new`."""
    if not path:
        return new
    result = copy.deepcopy(root)
    parent = result
    for part in path[:-1]:
        parent = parent[part]
    parent[path[-1]] = new
    return result


def other_type(value: Any) -> Any:
    """A value of another JSON type than `value`."""
    if isinstance(value, bool):
        return "true" if value else 0
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, str):
        return 0
    if isinstance(value, dict):
        return []
    if isinstance(value, list):
        return {}
    return 0  # null


def mutations(value: Any) -> Dict[str, List[Tuple[str, Any]]]:
    """Candidate invalid instances from one valid one, per kind, as (pointer, mutated value),
    deepest nodes first: a mutation deep inside an instance makes an engine track the structure
    up to it, where a wrong root is refused at the first token. Most candidates are still valid
    for a given schema; the validator keeps those it rejects."""
    found: Dict[str, List[Tuple[str, Any]]] = {kind: [] for kind in MUTATION_KINDS}
    touched = [pair for _, pair in zip(range(MUTATED_NODES), nodes(value))]
    for path, node in sorted(touched, key=lambda pair: -len(pair[0])):  # stable: pre-order among equals
        pointer = "".join(f"/{part}" for part in path) or "/"
        found["wrong-type"].append((pointer, replaced(value, path, other_type(node))))
        if isinstance(node, dict):
            for key in node:
                without = {k: v for k, v in node.items() if k != key}
                found["drop-key"].append((f"{pointer.rstrip('/')}/{key}", replaced(value, path, without)))
            if EXTRA_KEY not in node:
                found["extra-key"].append((pointer, replaced(value, path, {**node, EXTRA_KEY: 0})))
        elif isinstance(node, bool) or node is None:
            continue
        elif isinstance(node, (int, float)):
            for shift in (10**9, -10**9):
                found["off-enum-or-range"].append((pointer, replaced(value, path, node + shift)))
        elif isinstance(node, str):
            for text in (node + "~", ""):
                found["off-enum-or-range"].append((pointer, replaced(value, path, text)))
        elif isinstance(node, list):
            found["off-enum-or-range"].append((pointer, replaced(value, path, [])))
            if node:
                found["off-enum-or-range"].append((pointer, replaced(value, path, node + [node[0]])))
    return found


def interleaved(lists: List[List[Any]]) -> Iterator[Any]:
    """The first item of each list, then the second of each, and so on."""
    for index in range(max((len(items) for items in lists), default=0)):
        for items in lists:
            if index < len(items):
                yield items[index]


def generate_instances(schema: Any, seed: int, valid_count: int, invalid_count: int) -> Dict[str, Any]:
    """Valid instances drawn with hypothesis-jsonschema and invalid ones by mutation, each
    confirmed by the independent validator (see the module docstring)."""
    schema = ascii_patterns(schema)
    validator = validator_for(schema)
    drawn = draw_examples(schema, seed, GENERATED_EXAMPLES)
    valid: Dict[str, Any] = {}
    for value in drawn:
        try:
            text = compact(value)
        except (TypeError, ValueError):  # NaN, or an integer too long to print
            continue
        if text in valid or len(text.encode("utf-8")) > MAX_INSTANCE_BYTES:
            continue
        value = json.loads(text)  # what the engines will read (tuples become lists, and so on)
        if validate(validator, value)[0] == "valid":
            valid[text] = value
    if not valid:
        return {"status": "no instances", "reason": f"no valid instance among {len(drawn)} drawn"}
    ordered = sorted(valid.items(), key=lambda item: (len(item[0]), item[0]))
    positives = [value for _, value in spread(ordered, valid_count)]
    # Every kind from every valid instance in turn, the largest instance first.
    candidates = interleaved([[(kind, pointer, mutated) for pointer, mutated in listed]
                              for value in reversed(positives) for kind, listed in mutations(value).items()])
    negatives: List[Dict[str, Any]] = []
    seen = set()
    for checked, (kind, pointer, mutated) in enumerate(candidates):
        if len(negatives) >= invalid_count or checked >= MAX_MUTATION_CHECKS:
            break
        text = compact(mutated)
        if text in seen or text in valid:
            continue
        seen.add(text)
        if validate(validator, json.loads(text))[0] == "invalid":
            negatives.append({"value": mutated, "mutation": f"{kind} at {pointer}"})
    return {"status": "ok", "drawn": len(drawn), "distinct_valid": len(valid), "positive": positives,
            "negative": negatives}


def generation_worker(schema_path: str, seed: int, valid_count: int, invalid_count: int, results) -> None:
    import warnings

    warnings.simplefilter("ignore")  # Hypothesis and jsonschema warn about drafts and formats
    try:
        schema = json.loads(Path(schema_path).read_text(encoding="utf-8"))
        entry = generate_instances(schema, seed, valid_count, invalid_count)
    except MemoryError:
        entry = {"status": "no instances", "reason": "memory limit"}
    except Exception as error:  # noqa: BLE001  (unsupported schemas, unsatisfiable ones, bad regexes)
        message = " ".join(str(error).split())[:300]
        entry = {"status": "no instances", "reason": f"{type(error).__name__}: {message}"}
    results.put(entry)


def check_generator() -> None:
    """Exits with a hint unless hypothesis-jsonschema draws here (imported once, so every forked
    generator inherits it). Its object strategy uses a Hypothesis internal that Hypothesis
    6.170.10 changed; without this check every schema would be recorded as "no instances"."""
    try:
        import hypothesis_jsonschema  # noqa: F401
    except ImportError:
        sys.exit("generating JSONSchemaBench instances needs hypothesis-jsonschema: "
                 "pip install hypothesis-jsonschema")
    try:
        draw_examples({"type": "object", "properties": {"a": {"type": "integer"}}}, 0, 2)
    except Exception as error:  # noqa: BLE001
        sys.exit(f"hypothesis-jsonschema cannot draw with the installed Hypothesis ({generator_versions()}): "
                 f"{type(error).__name__}: {error}; pip install 'hypothesis<6.170.10'")


def generator_versions() -> Dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    versions = {}
    for name in ("hypothesis", "hypothesis-jsonschema", "jsonschema"):
        try:
            versions[name] = version(name)
        except PackageNotFoundError:
            versions[name] = "not installed"
    return versions


def load_instances_cache(path: Path, generation: Dict[str, Any]) -> Dict[str, Any]:
    """The cache at `path` (a fresh one when absent); its generation settings must match."""
    if not path.exists():
        return {"generation": generation, "schemas": {}}
    cache = json.loads(path.read_text(encoding="utf-8"))
    if cache.get("generation") != generation:
        sys.exit(f"{path} holds instances generated with {cache.get('generation')}, not {generation}: "
                 "pass another --instances-cache")
    return cache


def save_instances_cache(path: Path, cache: Dict[str, Any]) -> None:
    partial = path.with_name(path.name + ".partial")
    partial.write_text(json.dumps(cache, ensure_ascii=False, sort_keys=True), encoding="utf-8")
    partial.replace(path)  # atomic: an interrupted run never leaves half a cache


def bench_key(task: Dict[str, Any]) -> str:
    """'Github_easy/o10008.json': a JSONSchemaBench schema's name in the cache and the results."""
    return f"{task['subset']}/{Path(task['path']).name}"


def jsonschemabench_tasks(args) -> List[Dict[str, Any]]:
    """The sampled JSONSchemaBench schemas that have generated instances (generating the missing
    ones into the cache first)."""
    selected = bench_tasks(args.schemas, None, args.sample, args.seed, 0)
    selected = [t for t in selected if not args.match or args.match in bench_key(t)]
    if args.limit:
        selected = selected[:args.limit]
    generation = {"seed": args.seed, "valid": args.valid, "invalid": args.invalid, "examples": GENERATED_EXAMPLES,
                  "max_instance_bytes": MAX_INSTANCE_BYTES, "patterns": "ascii"}
    cache_path = args.instances_cache or args.out.with_name(args.out.name + ".instances.json")
    cache = load_instances_cache(cache_path, generation)
    missing = [t for t in selected if bench_key(t) not in cache["schemas"]]
    if missing:
        check_generator()
        cache.setdefault("versions", generator_versions())
        print(f"generating instances for {len(missing)} schemas into {cache_path}", flush=True)
    context = mp.get_context("fork")
    for number, task in enumerate(missing, 1):
        results = context.Queue()
        process = context.Process(target=generation_worker, daemon=True,
                                  args=(task["path"], args.seed, args.valid, args.invalid, results))
        process.start()
        entry, failure = wait_for_result(process, results, args.generation_timeout, args.memory_limit_mb)
        if entry is None:
            entry = {"status": "no instances", "reason": {"timeout": f"over {args.generation_timeout:g} s",
                                                          "memory": "memory limit"}.get(failure, "generator died")}
        if process.is_alive():
            process.kill()
        process.join()
        cache["schemas"][bench_key(task)] = entry
        save_instances_cache(cache_path, cache)
        if number % 10 == 0 or number == len(missing):
            print(f"  {number}/{len(missing)}", flush=True)
    tasks = []
    for task in selected:
        entry = cache["schemas"][bench_key(task)]
        if entry["status"] != "ok":
            continue
        instances = [{"label": "positive", "value": value} for value in entry["positive"]]
        instances += [{"label": "negative", "value": item["value"], "mutation": item["mutation"]}
                      for item in entry["negative"]]
        tasks.append({"schema": bench_key(task), "subset": task["subset"], "path": task["path"], "instances": instances})
    print(instances_summary(cache, [bench_key(t) for t in selected]), flush=True)
    return tasks


def instances_summary(cache: Dict[str, Any], keys: List[str]) -> str:
    entries = [cache["schemas"][key] for key in keys if key in cache["schemas"]]
    ok = [e for e in entries if e["status"] == "ok"]
    reasons: Dict[str, int] = {}
    for entry in entries:
        if entry["status"] != "ok":
            reason = entry["reason"].split(":")[0] if ":" in entry["reason"] else entry["reason"]
            reasons[reason] = reasons.get(reason, 0) + 1
    lines = [f"instances: {len(entries)} schemas, {len(ok)} with instances "
             f"({sum(len(e['positive']) for e in ok)} valid, {sum(len(e['negative']) for e in ok)} invalid), "
             f"{len(entries) - len(ok)} without"]
    lines += [f"  no instances: {count} x {reason}" for reason, count in sorted(reasons.items(), key=lambda x: -x[1])]
    return "\n".join(lines)


# ---------------------------------------------------------------------------
# driver


def tokenizer_name(path: Path) -> str:
    """'gpt2' for gpt2.tokenizer.json: the name records and reports carry."""
    name = path.name
    for suffix in (".tokenizer.json", ".json"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


EOS_NAMES = ("<|end_of_text|>", "<|endoftext|>", "<|im_end|>", "</s>")


def find_eos(tokenizer) -> Optional[int]:
    for name in EOS_NAMES:
        if tokenizer.token_to_id(name) is not None:
            return tokenizer.token_to_id(name)
    return None


def run(args) -> int:
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(args.tokenizer))
    eos = args.eos_token_id if args.eos_token_id is not None else find_eos(tokenizer)
    if eos is None:
        sys.exit(f"{args.tokenizer}: none of {', '.join(EOS_NAMES)} is a token; pass --eos-token-id")
    setting = {"tokenizer": tokenizer_name(args.tokenizer), "eos": eos, "corpus": args.corpus}
    done = set()
    if args.out.exists():
        for line in args.out.read_text().splitlines():
            record = json.loads(line)
            earlier = {key: record.get(key) for key in setting}
            if earlier != setting:
                sys.exit(f"{args.out} holds results for {earlier}, this run is {setting}: pass another --out")
            done.add((record["engine"], record["schema"]))
    print(f"tokenizer {setting['tokenizer']}, EOS {tokenizer.id_to_token(eos)!r} (id {eos}), "
          f"corpus {args.corpus}", flush=True)
    if args.corpus == "jsonschemabench":
        tasks, documents = jsonschemabench_tasks(args), {}
    else:
        tasks = schemastore_tasks(args.schemas, args.match, args.limit)
        documents = schemastore_documents(args.schemas)
    # fork: the parent holds only the task list and a tokenizer it never ran, and the worker
    # function need not be importable by name (this file is a script, also loaded by tests).
    context = mp.get_context("fork")
    stderr_file = tempfile.NamedTemporaryFile(prefix="cross-engine-", suffix=".stderr", delete=False)
    stderr_file.close()
    try:
        with args.out.open("a") as out:
            for name in args.engines:
                pending = [t for t in tasks if (name, t["schema"]) not in done]
                print(f"{name}: {len(pending)} schemas", flush=True)
                process = None
                for task in pending:
                    if process is None or not process.is_alive():
                        task_queue, result_queue = context.Queue(), context.Queue()
                        process = context.Process(target=worker, daemon=True, args=(
                            name, str(args.tokenizer), eos, documents, stderr_file.name, task_queue, result_queue))
                        process.start()
                        ready, failure = wait_for_result(process, result_queue, args.setup_timeout,
                                                         args.memory_limit_mb)
                        if ready is None:
                            process.kill()
                            sys.exit(f"{name}: the worker could not start ({failure}; is the engine installed?) "
                                     f"{tail_of(stderr_file.name)}")
                    task_queue.put(task)
                    record, failure = wait_for_result(process, result_queue, args.timeout, args.memory_limit_mb)
                    if record is None:
                        process.kill()
                        process.join()
                        record = {"schema": task["schema"], "status": failure, "instances": []}
                        if failure == "crash":
                            record["message"] = f"exit code {process.exitcode}: {tail_of(stderr_file.name)}"
                        elif failure == "memory":
                            record["message"] = f"resident size past {args.memory_limit_mb} MB"
                        process = None
                    elif record["status"] == "memory":
                        process.kill()  # a MemoryError can leave the engine half-built: start afresh
                        process.join()
                        process = None
                    done.add((name, task["schema"]))
                    record.update(engine=name, **setting)
                    if "subset" in task:
                        record["subset"] = task["subset"]
                    out.write(json.dumps(record) + "\n")
                    out.flush()
                if process is not None:
                    task_queue.put(None)
                    process.join(timeout=10)
                    if process.is_alive():
                        process.kill()
    finally:
        os.unlink(stderr_file.name)
    return 0


# ---------------------------------------------------------------------------
# report


def percentile(values: List[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))] if ordered else float("nan")


def mask_figures(values: List[float]) -> List[float]:
    """p50, p99, max and mean of mask times (NaN for none)."""
    if not values:
        return [float("nan")] * 4
    return [percentile(values, .5), percentile(values, .99), max(values), statistics.fmean(values)]


def print_table(header: List[str], rows: List[List[str]], markdown: bool) -> None:
    if markdown:
        print("| " + " | ".join(header) + " |")
        print("|---|" + "---:|" * (len(header) - 1))
        for row in rows:
            print("| " + " | ".join(row) + " |")
        return
    widths = [max(len(cell) for cell in column) for column in zip(header, *rows)]
    for row in [header] + rows:
        print("  ".join(cell.ljust(width) if index == 0 else cell.rjust(width)
                        for index, (cell, width) in enumerate(zip(row, widths))))


def number(value: float, digits: int) -> str:
    if value != value:  # NaN: no values
        return "-"
    return f"{value:,.{digits}f}"


def report(args) -> int:
    records = [json.loads(line) for line in args.results.read_text().splitlines()]
    by_engine: Dict[str, List[Dict[str, Any]]] = {}
    for record in records:
        by_engine.setdefault(record["engine"], []).append(record)
    tokenizers = sorted({str(r.get("tokenizer", "unrecorded")) for r in records})
    corpora = sorted({str(r.get("corpus", "schemastore")) for r in records})
    print(f"tokenizer: {', '.join(tokenizers)}; corpus: {', '.join(corpora)}\n")
    cache_path = args.instances_cache or args.results.with_name(args.results.name + ".instances.json")
    if "jsonschemabench" in corpora and cache_path.exists():
        cache = json.loads(cache_path.read_text(encoding="utf-8"))
        print(instances_summary(cache, sorted(cache["schemas"])) + "\n")
    compiled_by = {name: {r["schema"] for r in rs if r["status"] == "compiled"} for name, rs in by_engine.items()}
    right_by = {name: {r["schema"] for r in rs if r["status"] == "compiled" and r["instances"]
                       and all(i["outcome"] == "correct" for i in r["instances"])} for name, rs in by_engine.items()}
    matched = set.intersection(*right_by.values()) if right_by else set()
    only_ours = compiled_by.get("maskforge", set()) - set.union(set(), *(v for k, v in compiled_by.items()
                                                                          if k != "maskforge"))
    rows = []
    for name, rs in by_engine.items():
        count = lambda status: str(sum(r["status"] == status for r in rs))  # noqa: E731
        inst = [i for r in rs for i in r["instances"]]
        ok = lambda label: (f"{sum(i['outcome'] == 'correct' for i in inst if i['label'] == label)}/"  # noqa: E731
                            f"{sum(i['label'] == label for i in inst)}")
        rows.append([name, str(len(rs)), count("compiled"), count("error"), count("timeout"), count("crash"),
                     count("memory"), ok("positive"), ok("negative"), str(sum(i["outcome"] == "error" for i in inst)),
                     str(len(right_by[name]))])
    print_table(["engine", "schemas", "compiled", "errors", "timeouts", "crashes", "memory", "positive admitted",
                 "negative refused", "instance errors", "schemas with every instance right"], rows, args.markdown)
    print(f"\nmatched set (every engine compiles and gets every instance right): {len(matched)} schemas\n")
    rows = []
    for name, rs in by_engine.items():
        compiled = [r for r in rs if r["status"] == "compiled"]
        ttfm = [r["ttfm_s"] * 1e3 for r in compiled]
        masks = [t * 1e6 for r in compiled for t in r.get("mask_s", [])]
        matched_masks = [t * 1e6 for r in compiled if r["schema"] in matched for t in r.get("mask_s", [])]
        rss = max((r["max_rss_kb"] / 1024 for r in compiled if "max_rss_kb" in r), default=float("nan"))
        ttfm_figures = [percentile(ttfm, .5), percentile(ttfm, .9), percentile(ttfm, .99),
                        max(ttfm, default=float("nan"))]
        rows.append([name] + [number(v, 1) for v in ttfm_figures] + [number(v, 1) for v in mask_figures(masks)]
                    + [number(v, 1) for v in mask_figures(matched_masks)] + [number(rss, 0)])
    print_table(["engine", "TTFM p50 (ms)", "p90", "p99", "max", "mask p50 (µs)", "p99", "max", "mean",
                 "matched p50", "matched p99", "matched max", "matched mean", "peak RSS (MB)"], rows, args.markdown)
    print("\nTTFM (time to first mask) in ms, mask times in µs per token.")
    # Each engine's TTFM above is over the schemas it compiles, and the peers compile different
    # (often simpler) sets: compared pairwise on the schemas both compile, it means the same work.
    ttfm_of = {name: {r["schema"]: r["ttfm_s"] * 1e3 for r in rs if r["status"] == "compiled"}
               for name, rs in by_engine.items()}
    pairs = []
    for name in by_engine:
        if name == "maskforge" or "maskforge" not in ttfm_of:
            continue
        both = sorted(set(ttfm_of["maskforge"]) & set(ttfm_of[name]))
        ours, theirs = [ttfm_of["maskforge"][s] for s in both], [ttfm_of[name][s] for s in both]
        pairs.append([name, str(len(both)), number(percentile(ours, .5), 1), number(percentile(theirs, .5), 1),
                      number(percentile(ours, .9), 1), number(percentile(theirs, .9), 1)])
    if pairs:
        print("\nTTFM on the schemas MaskForge and each peer both compile:\n")
        print_table(["peer", "schemas", "MaskForge p50 (ms)", "peer p50", "MaskForge p90", "peer p90"], pairs,
                    args.markdown)
    print(f"\nschemas only MaskForge compiles: {len(only_ours)}")
    ours = [r for r in by_engine.get("maskforge", []) if r["schema"] in only_ours]
    if ours:
        inst = [i for r in ours for i in r["instances"]]
        right = sum(1 for r in ours if r["instances"] and all(i["outcome"] == "correct" for i in r["instances"]))
        ttfm = [r["ttfm_s"] * 1e3 for r in ours]
        masks = [t * 1e6 for r in ours for t in r.get("mask_s", [])]
        print()
        print_table(["MaskForge on schemas only it compiles", "schemas", "every instance right", "instances right",
                     "TTFM p50 (ms)", "p90", "max", "mask p50 (µs)", "p99", "max", "mean", "masks"],
                    [["maskforge", str(len(ours)), str(right),
                      f"{sum(i['outcome'] == 'correct' for i in inst)}/{len(inst)}",
                      number(percentile(ttfm, .5), 1), number(percentile(ttfm, .9), 1), number(max(ttfm), 1)]
                     + [number(v, 1) for v in mask_figures(masks)] + [str(len(masks))]], args.markdown)
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    run_parser = commands.add_parser("run", help="run the engines and append results")
    run_parser.add_argument("--out", type=Path, required=True, help="JSON-lines results (resumed when present)")
    run_parser.add_argument("--engines", nargs="+", default=ENGINES, choices=ENGINES)
    run_parser.add_argument("--tokenizer", type=Path, default=default_tokenizer())
    run_parser.add_argument("--eos-token-id", type=int)
    run_parser.add_argument("--corpus", choices=["schemastore", "jsonschemabench"], default="schemastore")
    run_parser.add_argument("--schemas", type=Path, default=default_schemas_dir(),
                            help="folder holding schemastore/ and jsonschemabench/ "
                                 "(default: $MASKFORGE_SCHEMAS or ../shared/schemas)")
    run_parser.add_argument("--match",
                            help="only schemas whose file name (jsonschemabench: subset/file) contains this")
    run_parser.add_argument("--limit", type=int, help="only the first N schemas (after --sample)")
    run_parser.add_argument("--sample", type=int,
                            help="jsonschemabench: a seeded random sample of N schemas per subset")
    run_parser.add_argument("--seed", type=int, default=0,
                            help="jsonschemabench: seed of the sample and of generation")
    run_parser.add_argument("--valid", type=int, default=3, help="jsonschemabench: valid instances per schema")
    run_parser.add_argument("--invalid", type=int, default=3, help="jsonschemabench: invalid instances per schema")
    run_parser.add_argument("--instances-cache", type=Path,
                            help="jsonschemabench: generated instances (default: <out>.instances.json)")
    run_parser.add_argument("--generation-timeout", type=float, default=30.0,
                            help="jsonschemabench: seconds to generate one schema's instances")
    run_parser.add_argument("--timeout", type=float, default=60.0, help="seconds per schema and engine")
    run_parser.add_argument("--memory-limit-mb", type=int, default=8192,
                            help="resident size past which a worker is killed (0: no limit)")
    run_parser.add_argument("--setup-timeout", type=float, default=300.0,
                            help="seconds for a worker to load its engine and tokenizer")
    report_parser = commands.add_parser("report", help="print the tables of a results file")
    report_parser.add_argument("results", type=Path)
    report_parser.add_argument("--markdown", action="store_true", help="Markdown tables")
    report_parser.add_argument("--instances-cache", type=Path,
                               help="jsonschemabench: the instances cache to summarise "
                                    "(default: <results>.instances.json)")
    args = parser.parse_args(argv)
    if args.command == "run" and args.schemas is None:
        parser.error("no schema folder: pass --schemas or set $MASKFORGE_SCHEMAS")
    return run(args) if args.command == "run" else report(args)


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""MaskForge, llguidance, XGrammar and outlines-core on the same schemas, tokenizer and instances.

For every SchemaStore schema with instances (../shared/schemas/schemastore, or --schemas), each
engine compiles the schema and then reads each positive and negative instance token by token:
at every step it writes its mask, the instance's next token must be allowed, and the engine
consumes it; at the end EOS must be allowed. A positive instance counts as admitted when every
token and EOS were allowed; a negative one as refused when some token or EOS was not.

Each engine runs in its own worker process (one schema at a time, with a time limit; a worker
that hangs or dies is replaced and the schema recorded as a timeout or crash; memory is the
worker's peak resident size). Results are
appended to a JSON-lines file, one line per (engine, schema), so an interrupted run resumes
where it stopped. Instances are written compactly (`json.dumps(..., separators=(",", ":"))`),
so engines that restrict whitespace are not penalised.

Time to first mask = compile + bind/matcher creation + first mask (engines that compile lazily
pay there). Per-token mask time covers every later mask. Engine settings: MaskForge with the
catalog served through `registry=`; llguidance's JSON schema grammar with its defaults; XGrammar
`compile_json_schema(any_whitespace=True, strict_mode=False)` (JSON Schema's own semantics for
unlisted properties); outlines-core's `build_regex_from_schema` with its default whitespace.

    python integration/cross_engine.py run --out results.jsonl [--engines ...] [--match TEXT] [--limit N]
    python integration/cross_engine.py report results.jsonl

Needs the optional benchmark dependencies: pip install llguidance xgrammar outlines-core
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import resource
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional

sys.path.insert(0, str(Path(__file__).resolve().parent))
from schema_corpora import default_schemas_dir, default_tokenizer, schemastore_documents  # noqa: E402

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


def run_schema(engine: Engine, encode, task: Dict[str, Any]) -> Dict[str, Any]:
    record: Dict[str, Any] = {"schema": task["schema"], "instances": []}
    schema_text = Path(task["path"]).read_text(encoding="utf-8")
    texts = []
    for label, path in task["instances"]:
        value = json.loads(Path(path).read_text(encoding="utf-8"))
        texts.append((label, encode(json.dumps(value, ensure_ascii=False, separators=(",", ":")))))
    started = time.perf_counter()
    try:
        compiled = engine.compile(schema_text)
        matcher = compiled()
        matcher.allowed(engine.eos)  # the first mask
    except Exception as error:  # noqa: BLE001  (any refusal to compile is the finding)
        record.update(status="error", message=f"{type(error).__name__}: {str(error)[:300]}")
        return record
    record["ttfm_s"] = time.perf_counter() - started
    record["status"] = "compiled"
    mask_times: List[float] = []
    for label, tokens in texts:
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
        except Exception as error:  # noqa: BLE001
            record["instances"].append({"label": label, "outcome": "error", "message": str(error)[:200]})
            continue
        correct = admitted == (label == "positive")
        outcome = {"label": label, "outcome": "correct" if correct else "wrong", "tokens": len(tokens)}
        if stopped_at is not None:
            outcome["refused_at"] = stopped_at  # == tokens: EOS refused at the end
        record["instances"].append(outcome)
    record["mask_s"] = mask_times
    record["max_rss_kb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return record


def worker(name: str, tokenizer_path: str, eos: int, documents: Dict[str, str], tasks, results) -> None:
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(tokenizer_path)
    engine = ENGINE_CLASSES[name](Path(tokenizer_path), eos, documents)
    encode = lambda text: tokenizer.encode(text, add_special_tokens=False).ids  # noqa: E731
    results.put({"ready": name})
    while True:
        task = tasks.get()
        if task is None:
            return
        results.put(run_schema(engine, encode, task))


# ---------------------------------------------------------------------------
# driver


def schemastore_tasks(root: Path, match: Optional[str], limit: Optional[int]) -> List[Dict[str, Any]]:
    store = root / "schemastore"
    manifest = json.loads((store / "manifest.json").read_text(encoding="utf-8"))
    tasks = []
    for name, entry in sorted(manifest.items()):
        path = store / (entry.get("schema") or "missing")
        if not entry.get("schema") or not path.is_file() or (match and match not in path.name):
            continue
        instances = [("positive", str(store / i["json"])) for i in entry.get("positive", [])]
        instances += [("negative", str(store / i["json"])) for i in entry.get("negative", [])]
        tasks.append({"schema": entry["schema"], "path": str(path), "instances": instances})
    return tasks[:limit] if limit else tasks


def wait_for_result(process, results, timeout: float) -> Optional[Dict[str, Any]]:
    """The worker's record, or None when it died or ran past `timeout` (engine set-up included
    on a fresh worker, which loads its tokenizer first)."""
    import queue

    deadline = time.monotonic() + timeout
    while True:
        try:
            return results.get(timeout=1.0)
        except queue.Empty:
            if not process.is_alive() or time.monotonic() > deadline:
                return None


def run(args) -> int:
    from tokenizers import Tokenizer

    done = set()
    if args.out.exists():
        for line in args.out.read_text().splitlines():
            record = json.loads(line)
            done.add((record["engine"], record["schema"]))
    tokenizer = Tokenizer.from_file(str(args.tokenizer))
    eos = args.eos_token_id
    if eos is None:
        for name in ("<|end_of_text|>", "<|endoftext|>", "</s>"):
            if tokenizer.token_to_id(name) is not None:
                eos = tokenizer.token_to_id(name)
                break
    tasks = schemastore_tasks(args.schemas, args.match, args.limit)
    documents = schemastore_documents(args.schemas)
    # fork: the parent holds only the task list and a tokenizer it never ran, and the worker
    # function need not be importable by name (this file is a script, also loaded by tests).
    context = mp.get_context("fork")
    with args.out.open("a") as out:
        for name in args.engines:
            pending = [t for t in tasks if (name, t["schema"]) not in done]
            print(f"{name}: {len(pending)} schemas", flush=True)
            process = None
            for task in pending:
                if process is None or not process.is_alive():
                    task_queue, result_queue = context.Queue(), context.Queue()
                    process = context.Process(target=worker, args=(name, str(args.tokenizer), eos, documents,
                                                                   task_queue, result_queue), daemon=True)
                    process.start()
                    ready = wait_for_result(process, result_queue, args.setup_timeout)
                    if ready is None:
                        sys.exit(f"{name}: the worker could not start (is the engine installed?)")
                task_queue.put(task)
                record = wait_for_result(process, result_queue, args.timeout)
                if record is None:
                    status = "crash" if not process.is_alive() else "timeout"
                    process.kill()
                    process = None
                    record = {"schema": task["schema"], "status": status, "instances": []}
                done.add((name, task["schema"]))
                record["engine"] = name
                out.write(json.dumps(record) + "\n")
                out.flush()
            if process is not None:
                task_queue.put(None)
                process.join(timeout=10)
    return 0


def percentile(values: List[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))] if ordered else float("nan")


def report(args) -> int:
    records = [json.loads(line) for line in args.results.read_text().splitlines()]
    by_engine: Dict[str, List[Dict[str, Any]]] = {}
    for record in records:
        by_engine.setdefault(record["engine"], []).append(record)
    compiled_by = {name: {r["schema"] for r in rs if r["status"] == "compiled"} for name, rs in by_engine.items()}
    right_by = {name: {r["schema"] for r in rs if r["status"] == "compiled" and r["instances"]
                       and all(i["outcome"] == "correct" for i in r["instances"])} for name, rs in by_engine.items()}
    matched = set.intersection(*right_by.values()) if right_by else set()
    print(f"{'engine':14} {'schemas':>7} {'compiled':>8} {'errors':>6} {'timeouts':>8} {'crashes':>7} "
          f"{'pos ok':>10} {'neg ok':>10} {'inst err':>8} {'all right':>9}")
    for name, rs in by_engine.items():
        count = lambda status: sum(r["status"] == status for r in rs)  # noqa: E731
        inst = [i for r in rs for i in r["instances"]]
        pos = [i for i in inst if i["label"] == "positive"]
        neg = [i for i in inst if i["label"] == "negative"]
        ok = lambda items: f"{sum(i['outcome'] == 'correct' for i in items)}/{len(items)}"  # noqa: E731
        print(f"{name:14} {len(rs):7} {count('compiled'):8} {count('error'):6} {count('timeout'):8} "
              f"{count('crash'):7} {ok(pos):>10} {ok(neg):>10} {sum(i['outcome'] == 'error' for i in inst):8} "
              f"{len(right_by[name]):9}")
    print(f"\nmatched set (every engine compiles and gets every instance right): {len(matched)} schemas")
    print(f"{'engine':14} {'TTFM p50':>9} {'p90':>9} {'p99':>9} {'max':>9} | {'mask p50':>9} {'p99':>9} "
          f"{'max':>9} {'mean':>9} | {'matched p50':>11} {'p99':>9} | {'max RSS MB':>10}")
    for name, rs in by_engine.items():
        compiled = [r for r in rs if r["status"] == "compiled"]
        ttfm = [r["ttfm_s"] * 1e3 for r in compiled]
        masks = [t * 1e6 for r in compiled for t in r.get("mask_s", [])]
        matched_masks = [t * 1e6 for r in compiled if r["schema"] in matched for t in r.get("mask_s", [])]
        rss = max((r.get("max_rss_kb", 0) for r in compiled), default=0) / 1024
        print(f"{name:14} {percentile(ttfm, .5):9.2f} {percentile(ttfm, .9):9.2f} {percentile(ttfm, .99):9.2f} "
              f"{max(ttfm, default=float('nan')):9.2f} | {percentile(masks, .5):9.1f} {percentile(masks, .99):9.1f} "
              f"{max(masks, default=float('nan')):9.1f} {statistics.fmean(masks) if masks else float('nan'):9.1f} | "
              f"{percentile(matched_masks, .5):11.1f} {percentile(matched_masks, .99):9.1f} | {rss:10.0f}")
    print("\nTTFM in ms, mask times in microseconds per token.")
    only_ours = compiled_by.get("maskforge", set()) - set.union(set(), *(v for k, v in compiled_by.items()
                                                                          if k != "maskforge"))
    print(f"schemas only MaskForge compiles: {len(only_ours)}")
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    run_parser = commands.add_parser("run", help="run the engines and append results")
    run_parser.add_argument("--out", type=Path, required=True, help="JSON-lines results (resumed when present)")
    run_parser.add_argument("--engines", nargs="+", default=ENGINES, choices=ENGINES)
    run_parser.add_argument("--tokenizer", type=Path, default=default_tokenizer())
    run_parser.add_argument("--eos-token-id", type=int)
    run_parser.add_argument("--schemas", type=Path, default=default_schemas_dir(),
                            help="folder holding schemastore/ (default: $MASKFORGE_SCHEMAS or ../shared/schemas)")
    run_parser.add_argument("--match", help="only schemas whose file name contains this text")
    run_parser.add_argument("--limit", type=int, help="only the first N schemas with instances")
    run_parser.add_argument("--timeout", type=float, default=60.0, help="seconds per schema and engine")
    run_parser.add_argument("--setup-timeout", type=float, default=300.0,
                            help="seconds for a worker to load its engine and tokenizer")
    report_parser = commands.add_parser("report", help="print the tables of a results file")
    report_parser.add_argument("results", type=Path)
    args = parser.parse_args(argv)
    return run(args) if args.command == "run" else report(args)


if __name__ == "__main__":
    sys.exit(main())

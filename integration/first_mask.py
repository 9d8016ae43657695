#!/usr/bin/env python3
"""Time to first mask on JSONSchemaBench: compile + bind + the first mask, per schema, for
MaskForge, llguidance and XGrammar on the same schemas and tokenizer, in the same run.

Each engine runs in a worker process of its own that takes the schemas one after another
(engine set-up once, no compile caches: MaskForge `executable_cache_bytes=0,
trie_cache_bytes=0`, XGrammar `cache_enabled=False`), with a time limit per schema (a worker
past it is killed, the schema recorded as a timeout, and a fresh worker takes the next one).
The engines are cross_engine.py's (same settings). Results go to a JSON-lines file, one line
per (engine, schema), so a run can be resumed; `report` prints p50 / p90 / p99 / p99.9 / max /
mean, the count above 100 ms and above 1 s, and plots a histogram of every engine's times.

    python integration/first_mask.py run --out ttfm-llama3.jsonl [--tokenizer PATH] [--engines maskforge,llguidance,xgrammar] [--sample N]
    python integration/first_mask.py report ttfm-llama3.jsonl [--plot docs/images/first-mask-llama3.png]
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import os
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Dict, List

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cross_engine import ENGINE_CLASSES, find_eos, wait_for_result  # noqa: E402  (sibling script)

REPO = Path(__file__).resolve().parent.parent


def default_schemas() -> Path:
    folder = os.environ.get("MASKFORGE_SCHEMAS") or str(REPO.parent / "shared" / "schemas")
    return Path(folder) / "jsonschemabench"


def default_tokenizer() -> Path:
    folder = os.environ.get("MASKFORGE_TOKENIZERS") or str(REPO.parent / "shared" / "tokenizers")
    return Path(folder) / "llama3.tokenizer.json"


def worker(name: str, tokenizer_path: str, eos: int, tasks, results) -> None:
    engine = ENGINE_CLASSES[name](Path(tokenizer_path), eos, {})
    results.put({"ready": name})
    while True:
        task = tasks.get()
        if task is None:
            return
        text = Path(task["path"]).read_text(encoding="utf-8", errors="replace")
        record = {"engine": name, "schema": task["schema"]}
        started = time.perf_counter()
        try:
            matcher = engine.compile(text)()
            matcher.allowed(eos)
            record.update(status="compiled", ttfm_s=time.perf_counter() - started)
        except Exception as error:  # noqa: BLE001  (a refusal is a finding, not a failure of the run)
            record.update(status="error", ttfm_s=time.perf_counter() - started,
                          message=f"{type(error).__name__}: {str(error)[:200]}")
        results.put(record)


def run(args) -> int:
    from tokenizers import Tokenizer

    paths = sorted(args.schemas.glob("*/*.json"))
    if args.sample:
        paths = sorted(random.Random(args.seed).sample(paths, min(args.sample, len(paths))))
    eos = args.eos_token_id if args.eos_token_id is not None else find_eos(Tokenizer.from_file(str(args.tokenizer)))
    done = set()
    if args.out.exists():
        for line in args.out.read_text().splitlines():
            record = json.loads(line)
            done.add((record["engine"], record["schema"]))
    context = multiprocessing.get_context("spawn")
    with args.out.open("a", encoding="utf-8") as out:
        for name in args.engines.split(","):
            todo = [p for p in paths if (name, str(p.relative_to(args.schemas))) not in done]
            process = None
            for path in todo:
                if process is None:
                    tasks, results = context.Queue(), context.Queue()
                    process = context.Process(target=worker, args=(name, str(args.tokenizer), eos, tasks, results), daemon=True)
                    process.start()
                    ready, why = wait_for_result(process, results, 600)
                    if ready is None:
                        print(f"{name}: the worker did not start ({why})", file=sys.stderr)
                        return 1
                schema = str(path.relative_to(args.schemas))
                tasks.put({"path": str(path), "schema": schema})
                record, why = wait_for_result(process, results, args.timeout, args.memory_limit_mb)
                if record is None:
                    record = {"engine": name, "schema": schema, "status": why, "ttfm_s": args.timeout}
                    process.kill()
                    process.join()
                    process = None
                record["tokenizer"] = args.tokenizer.name
                out.write(json.dumps(record) + "\n")
                out.flush()
            if process is not None:
                tasks.put(None)
                process.join(timeout=10)
            print(f"{name}: {len(todo)} schemas", file=sys.stderr)
    return 0


def quantile(ordered: List[float], q: float) -> float:
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def report(args) -> int:
    by_engine: Dict[str, List[Dict[str, Any]]] = {}
    for line in args.results.read_text().splitlines():
        record = json.loads(line)
        by_engine.setdefault(record["engine"], []).append(record)
    common = set.intersection(*({r["schema"] for r in rs if r["status"] == "compiled"} for rs in by_engine.values()))
    print(f"{args.results}: {', '.join(f'{e} {len(rs)}' for e, rs in by_engine.items())} schemas; {len(common)} compiled by every engine\n")
    print("| engine | schemas | compiled | errors | timeouts | p50 ms | p90 | p99 | p99.9 | max | mean | > 100 ms | > 1 s | p50 / p99 on the common set |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    series = {}
    for engine, records in by_engine.items():
        times = sorted(r["ttfm_s"] * 1e3 for r in records if r["status"] == "compiled")
        shared = sorted(r["ttfm_s"] * 1e3 for r in records if r["status"] == "compiled" and r["schema"] in common)
        series[engine] = times
        errors = sum(r["status"] == "error" for r in records)
        timeouts = sum(r["status"] in ("timeout", "memory", "crash") for r in records)
        print(f"| {engine} | {len(records)} | {len(times)} | {errors} | {timeouts} | " + " | ".join(
            f"{v:.2f}" for v in (quantile(times, 0.5), quantile(times, 0.9), quantile(times, 0.99), quantile(times, 0.999), times[-1],
                                 statistics.fmean(times))) + f" | {sum(t > 100 for t in times)} | {sum(t > 1000 for t in times)} | "
              f"{quantile(shared, 0.5):.2f} / {quantile(shared, 0.99):.2f} |")
    if args.plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        figure, axes = plt.subplots(figsize=(7.5, 4.2))
        low = min(min(t) for t in series.values())
        high = max(max(t) for t in series.values())
        bins = [10 ** (math.log10(max(low, 1e-3)) + i * (math.log10(high) - math.log10(max(low, 1e-3))) / 60) for i in range(61)]
        for engine, times in series.items():
            axes.hist(times, bins=bins, histtype="step", linewidth=1.5, label=f"{engine} ({len(times)} compiled)")
        axes.axvline(100, color="gray", linestyle=":", linewidth=1)
        axes.set_xscale("log")
        axes.set_yscale("log")
        axes.set_xlabel("compile + bind + first mask (ms)")
        axes.set_ylabel("schemas")
        axes.set_title(f"Time to first mask, JSONSchemaBench, {args.results.stem}")
        axes.legend(fontsize=8)
        figure.tight_layout()
        args.plot.parent.mkdir(parents=True, exist_ok=True)
        figure.savefig(args.plot, dpi=110)
        print(f"\nplot: {args.plot}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run")
    r.add_argument("--out", type=Path, required=True)
    r.add_argument("--schemas", type=Path, default=default_schemas())
    r.add_argument("--tokenizer", type=Path, default=default_tokenizer())
    r.add_argument("--eos-token-id", type=int, default=None)
    r.add_argument("--engines", default="maskforge,llguidance,xgrammar")
    r.add_argument("--sample", type=int, default=None)
    r.add_argument("--seed", type=int, default=0)
    r.add_argument("--timeout", type=float, default=30.0)
    r.add_argument("--memory-limit-mb", type=int, default=8192)
    p = sub.add_parser("report")
    p.add_argument("results", type=Path)
    p.add_argument("--plot", type=Path, default=None)
    args = parser.parse_args()
    return run(args) if args.command == "run" else report(args)


if __name__ == "__main__":
    sys.exit(main())

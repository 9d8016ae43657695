#!/usr/bin/env python3
"""Load time of programs written as bytes, against compile time, on JSONSchemaBench.

For each schema (all subsets, or a seeded sample): compile it with a fresh
`Compiler.without_cache()`, write it with `SchemaProgram.to_bytes()`, load the bytes with
another fresh compiler (`Compiler.load_program`), and check that the loaded program gives the
same backend and state count. One process, one schema after another. Prints, per backend,
p50 / p99 / p99.9 / max / mean of compile and load times and of the bytes' size.

A regular program loads as its automaton's table (read and checked); a structured or
composite one is compiled again from its source straight on its arm, skipping the arm
choice that a compile makes.

Usage:
    python integration/program_bytes.py [--schemas DIR] [--sample N] [--seed 0]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from pathlib import Path

import maskforge

REPO_ROOT = Path(__file__).resolve().parent.parent


def default_bench_dir() -> Path:
    folder = os.environ.get("MASKFORGE_SCHEMAS") or str(REPO_ROOT.parent / "shared" / "schemas")
    return Path(folder) / "jsonschemabench"


def quantile(ordered, q):
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def row(name, values, unit=1e3, fmt="{:.2f}"):
    ordered = sorted(values)
    cells = [quantile(ordered, 0.5), quantile(ordered, 0.99), quantile(ordered, 0.999), ordered[-1], statistics.fmean(ordered)]
    return f"| {name} | " + " | ".join(fmt.format(v * unit) for v in cells) + " |"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--schemas", type=Path, default=default_bench_dir(), help="the jsonschemabench folder")
    parser.add_argument("--sample", type=int, default=None, help="a seeded sample of this many schemas")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--slowest", type=int, default=0, help="list the N slowest compiles of each backend")
    args = parser.parse_args()
    paths = sorted(p for p in args.schemas.glob("*/*.json"))
    if not paths:
        print(f"no schemas under {args.schemas}", file=sys.stderr)
        return 2
    if args.sample is not None:
        paths = sorted(random.Random(args.seed).sample(paths, min(args.sample, len(paths))))
    by_backend: dict[str, dict[str, list[float]]] = {}
    refused = 0
    for path in paths:
        text = path.read_text(encoding="utf-8", errors="replace")
        started = time.perf_counter()
        try:
            program = maskforge.Compiler.without_cache().compile(text)
        except maskforge.MaskForgeError:
            refused += 1
            continue
        compiled = time.perf_counter() - started
        started = time.perf_counter()
        data = program.to_bytes()
        written = time.perf_counter() - started
        started = time.perf_counter()
        loaded = maskforge.Compiler.without_cache().load_program(data)
        load = time.perf_counter() - started
        if (loaded.backend, loaded.state_count) != (program.backend, program.state_count):
            print(f"MISMATCH {path}: {program} loaded as {loaded}", file=sys.stderr)
            return 1
        figures = by_backend.setdefault(program.backend, {"compile": [], "write": [], "load": [], "bytes": [], "paths": []})
        figures["paths"].append(str(path.relative_to(args.schemas)))
        figures["compile"].append(compiled)
        figures["write"].append(written)
        figures["load"].append(load)
        figures["bytes"].append(len(data))
    print(f"{len(paths)} schemas from {args.schemas}, {refused} refused by the compiler\n")
    print("| backend: figure | p50 | p99 | p99.9 | max | mean |")
    print("|---|---:|---:|---:|---:|---:|")
    for backend, figures in sorted(by_backend.items()):
        n = len(figures["compile"])
        print(row(f"{backend} ({n}): compile ms", figures["compile"]))
        print(row(f"{backend}: write ms", figures["write"]))
        print(row(f"{backend}: load ms", figures["load"]))
        print(row(f"{backend}: KiB", figures["bytes"], unit=1 / 1024, fmt="{:.1f}"))
        ratio = statistics.fmean(figures["compile"]) / statistics.fmean(figures["load"])
        print(f"| {backend}: mean compile / mean load | {ratio:.1f}x | | | | |")
    for backend, figures in sorted(by_backend.items()):
        ranked = sorted(zip(figures["compile"], figures["load"], figures["paths"]), reverse=True)[: args.slowest]
        for compiled, load, path in ranked:
            print(f"slowest {backend}: {path} compile {compiled * 1e3:.1f} ms, load {load * 1e3:.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Per-step latency of masking a batch: writing the masks, then applying them to logits.

For each batch size, B sessions of one bound schema stand at different positions of a real
instance; each repetition times, separately:

- `fill_masks`: all B masks written by one `maskforge.fill_masks` call (GIL released, threads
  from 8 rows up);
- `write_mask loop`: the same masks written by B `Session.write_mask` calls from Python;
- `apply numpy` / `apply torch`: `apply_token_bitmask_inplace` on `[B, vocab]` float32 logits.

Medians and p99 in microseconds per step (the whole batch). The machine's core count bounds what
the threads can give.

    python integration/processor_latency.py [--tokenizer PATH] [--batch-sizes 1 8 64 256]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Callable, Dict, List

import numpy as np

import maskforge

REPO = Path(__file__).resolve().parent.parent
SCHEMAS = {
    # Open object with integers and free strings: the structured arm.
    "structured": {"type": "object", "properties": {"id": {"type": "integer"}, "name": {"type": "string"},
                                                     "tags": {"type": "array", "items": {"type": "string"}}},
                   "required": ["id", "name"]},
    # Closed object of enums and bounded strings: the regular arm (one DFA row per state).
    "regular": {"type": "object", "properties": {"kind": {"enum": ["a", "b", "c"]},
                                                  "name": {"type": "string", "maxLength": 20}},
                "required": ["kind", "name"], "additionalProperties": False},
}
INSTANCES = {
    "structured": '{"id": 12345, "name": "a fairly long name", "tags": ["x", "yy", "zzz"]}',
    "regular": '{"kind": "b", "name": "short name"}',
}


def default_tokenizer() -> Path:
    folder = Path(os.environ.get("MASKFORGE_TOKENIZERS", REPO.parent / "shared" / "tokenizers"))
    llama3 = folder / "llama3.tokenizer.json"
    return llama3 if llama3.is_file() else REPO / "tests" / "data" / "tokenizers" / "gpt2.tokenizer.json"


def sessions_along(bound, vocabulary, text: str, count: int) -> List[maskforge.Session]:
    """`count` sessions at evenly spread positions of `text`, fed one byte-token at a time."""
    byte_ids: Dict[int, int] = {}
    for token in range(vocabulary.tokenizer_size):
        piece = vocabulary.token_bytes(token)
        if piece is not None and len(piece) == 1:
            byte_ids.setdefault(piece[0], token)
    data = text.encode()
    sessions = []
    for index in range(count):
        session = bound.start_session()
        for byte in data[: (index * len(data)) // max(count, 1)]:
            session.advance(byte_ids[byte])
        sessions.append(session)
    return sessions


def timed(action: Callable[[], None], repetitions: int) -> List[float]:
    samples = []
    for _ in range(repetitions):
        started = time.perf_counter()
        action()
        samples.append((time.perf_counter() - started) * 1e6)
    return samples


def summary(samples: List[float]) -> str:
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return f"{statistics.median(ordered):9.1f} {p99:9.1f}"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tokenizer", type=Path, default=default_tokenizer())
    parser.add_argument("--batch-sizes", type=int, nargs="+", default=[1, 2, 4, 8, 16, 32, 64, 128, 256])
    parser.add_argument("--repetitions", type=int, default=50)
    parser.add_argument("--json", type=Path, help="write the measurements here")
    args = parser.parse_args(argv)
    try:
        import torch
    except ImportError:
        torch = None
    vocabulary = maskforge.Vocabulary.from_tokenizer_json(args.tokenizer)
    vocab = vocabulary.mask_vocab_size
    print(f"tokenizer {args.tokenizer.name} ({vocab} ids), {os.cpu_count()} CPUs, "
          f"{args.repetitions} repetitions; microseconds per step for the whole batch (median, p99)")
    results = []
    for arm, schema in SCHEMAS.items():
        bound = maskforge.Compiler().compile(schema).bind(vocabulary)
        print(f"\n{arm} arm\n{'batch':>5} | {'fill_masks':>19} | {'write_mask loop':>19} | "
              f"{'apply numpy':>19} | {'apply torch':>19}")
        for batch in args.batch_sizes:
            sessions = sessions_along(bound, vocabulary, INSTANCES[arm], batch)
            masks = maskforge.allocate_token_bitmask(batch, vocab)
            rows = list(masks)
            fill = timed(lambda: maskforge.fill_masks(sessions, masks), args.repetitions)
            loop = timed(lambda: [s.write_mask(r) for s, r in zip(sessions, rows)], args.repetitions)
            logits = np.zeros((batch, vocab), dtype=np.float32)
            apply_np = timed(lambda: maskforge.apply_token_bitmask_inplace(logits, masks), args.repetitions)
            line = f"{batch:5} | {summary(fill)} | {summary(loop)} | {summary(apply_np)} | "
            record = {"arm": arm, "batch": batch, "fill_masks_us": fill, "write_mask_loop_us": loop,
                      "apply_numpy_us": apply_np}
            if torch is not None:
                torch_logits = torch.zeros((batch, vocab))
                torch_masks = torch.from_numpy(masks)
                apply_t = timed(lambda: maskforge.apply_token_bitmask_inplace(torch_logits, torch_masks),
                                args.repetitions)
                line += summary(apply_t)
                record["apply_torch_us"] = apply_t
            print(line)
            results.append(record)
    if args.json:
        args.json.write_text(json.dumps({"tokenizer": str(args.tokenizer), "cpus": os.cpu_count(),
                                         "results": results}))
    return 0


if __name__ == "__main__":
    sys.exit(main())

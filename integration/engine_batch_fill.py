#!/usr/bin/env python3
"""Mask-fill time per decoding step of a serving batch, through the vLLM adapter.

For batch sizes 1 to 256: as many requests, cycling through the replay harness's mixed
kinds (JSON Schema, JSON object, regex, choice, two structural tags; tests/engine_replay.py),
each at its own place in its text. At each step every grammar's row is filled, then each
grammar advances by its next token (a finished one starts again). Timed two ways:

- `per row`: `MaskForgeGrammar.fill_bitmask` for each request, as vLLM's manager calls it;
- `batched`: one `fill_bitmasks(grammars, bitmask, rows)` call (GIL released, rows filled on
  MaskForge's thread pool when the batch is large enough to pay).

Prints p50 / p99 / max / mean per batch size (ms per step) and, with matplotlib installed,
plots them to docs/images/engine-batch-fill.png beside the decode step times of two published
vLLM runs (cited in docs/serving.md). Tokenizers: the vendored GPT-2 one, and Llama-3 from
`$MASKFORGE_TOKENIZERS` (default ../shared/tokenizers) when present.

Usage:
    python integration/engine_batch_fill.py [--steps 40] [--plot docs/images/engine-batch-fill.png]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path
from types import SimpleNamespace

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

import transformers  # noqa: E402

from engine_replay import REQUESTS, Reference  # noqa: E402  (the replay harness's requests)
from maskforge.integrations.vllm import MaskForgeBackend, fill_bitmasks  # noqa: E402

BATCHES = (1, 2, 4, 8, 16, 32, 64, 128, 256)
# Published decode step times (inter-token latency), cited in docs/serving.md.
STEP_TIMES = {
    "Llama-3.1-8B, A100 40GB, batch 1 (13 ms)": 13.3,
    "Qwen2.5-0.5B, L4, concurrency 1 (5.1 ms)": 5.1,
}


def tokenizers():
    folder = Path(os.environ.get("MASKFORGE_TOKENIZERS") or REPO.parent / "shared" / "tokenizers")
    found = {"GPT-2": REPO / "tests" / "data" / "tokenizers" / "gpt2.tokenizer.json"}
    if (folder / "llama3.tokenizer.json").exists():
        found["Llama-3"] = folder / "llama3.tokenizer.json"
    return found


def quantile(ordered, q):
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def measure(path: Path, steps: int):
    tokenizer = transformers.PreTrainedTokenizerFast(tokenizer_file=str(path))
    eos = tokenizer.convert_tokens_to_ids("<|endoftext|>") if "gpt2" in path.name else None
    if eos is None or eos == tokenizer.unk_token_id:
        eos = tokenizer.convert_tokens_to_ids("<|end_of_text|>")
    tokenizer.eos_token = tokenizer.convert_ids_to_tokens(eos)
    config = SimpleNamespace(speculative_config=None, structured_outputs_config=SimpleNamespace())
    backend = MaskForgeBackend(config, tokenizer=tokenizer, vocab_size=len(tokenizer))
    reference = Reference(backend.vocabulary, backend.compiler)
    paths = [reference.tokens(kind, spec, text) for kind, spec, text in REQUESTS]
    results = {}
    for batch in BATCHES:
        # Two sets of grammars at the same places, one filled row by row and one batched, so
        # that neither reuses what the other's masks worked out.
        sets, plans, at = ([], []), [], []
        for i in range(batch):
            kind, spec, _ = REQUESTS[i % len(REQUESTS)]
            tokens = paths[i % len(REQUESTS)]
            start = (i * 7) % (len(tokens) - 1)
            for grammars in sets:
                grammar = backend.compile_grammar(kind, spec)
                grammar.accept_tokens("r", tokens[:start])
                grammars.append(grammar)
            plans.append(tokens)
            at.append(start)
        bitmask = backend.allocate_token_bitmask(batch)
        rows = list(range(batch))
        per_row, batched = [], []
        for _ in range(steps):
            started = time.perf_counter()
            for i, grammar in enumerate(sets[0]):
                grammar.fill_bitmask(bitmask, i)
            per_row.append(time.perf_counter() - started)
            started = time.perf_counter()
            fill_bitmasks(sets[1], bitmask, rows)
            batched.append(time.perf_counter() - started)
            for i in range(batch):
                restart = at[i] + 1 >= len(plans[i])  # the next token is EOS: start the text again
                for grammars in sets:
                    if restart:
                        grammars[i].reset()
                    grammars[i].accept_tokens("r", [plans[i][0 if restart else at[i]]])
                at[i] = 1 if restart else at[i] + 1
        results[batch] = (per_row, batched)
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--plot", type=Path, default=REPO / "docs" / "images" / "engine-batch-fill.png")
    args = parser.parse_args()
    measured = {}
    print("| tokenizer | batch | per row p50 | p99 | max | mean | batched p50 | p99 | max | mean |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, path in tokenizers().items():
        measured[name] = measure(path, args.steps)
        for batch, (per_row, batched) in measured[name].items():
            cells = []
            for series in (per_row, batched):
                ordered = sorted(series)
                cells += [quantile(ordered, 0.5), quantile(ordered, 0.99), ordered[-1], statistics.fmean(ordered)]
            print(f"| {name} | {batch} | " + " | ".join(f"{c * 1e3:.3f}" for c in cells) + " |")
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("(matplotlib is not installed: no plot)", file=sys.stderr)
        return 0
    figure, axes = plt.subplots(figsize=(7.5, 4.5))
    for name, results in measured.items():
        batches = list(results)
        for label, index, style in (("per row", 0, "--"), ("batched", 1, "-")):
            p50 = [statistics.median(results[b][index]) * 1e3 for b in batches]
            p99 = [quantile(sorted(results[b][index]), 0.99) * 1e3 for b in batches]
            line, = axes.plot(batches, p50, style, marker="o", label=f"{name}, {label} (p50)")
            axes.plot(batches, p99, style, color=line.get_color(), alpha=0.35, label=f"{name}, {label} (p99)")
    for label, ms in STEP_TIMES.items():
        axes.axhline(ms, color="gray", linestyle=":", linewidth=1)
        axes.text(1, ms * 1.08, f"decode step: {label}", fontsize=7, color="gray")
    axes.set_xscale("log", base=2)
    axes.set_yscale("log")
    axes.set_xlabel("requests in the batch")
    axes.set_ylabel("mask fill per decoding step (ms)")
    axes.set_title("MaskForge mask fill per step, vLLM adapter (2-vCPU VM)")
    axes.legend(fontsize=7, loc="lower right")
    axes.grid(True, which="both", alpha=0.2)
    args.plot.parent.mkdir(parents=True, exist_ok=True)
    figure.tight_layout()
    figure.savefig(args.plot, dpi=110)
    print(f"plot: {args.plot}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""End-to-end generation overhead: schema-constrained against unconstrained decoding on the CPU.

For each schema, one prompt is decoded greedily with `model.generate` (batch of one, key/value
cache) twice per repetition, in alternation:

- constrained: with `maskforge.LogitsProcessor` in `logits_processor=[...]`, the integration a
  transformers user calls. It stops when the schema completes (EOS is then the only allowed
  token) or after `--max-new-tokens`;
- unconstrained: the same model and prompt with no processor, EOS stopping disabled
  (`min_new_tokens` = `max_new_tokens`) and the budget set to the number of tokens the constrained
  run produced, so both runs generate exactly the same number of tokens.

Measured, per run:

- tokens/s: generated tokens (the final EOS included: it costs a forward pass and a mask like any
  other) over the wall time of the `generate` call (prefill, every decoding step and the
  library's per-call setup; not the processor's construction, which compiles and binds the
  schema once and is reported apart). The same ratio is also computed from the calling
  thread's CPU time, which other processes on the machine disturb less (with one torch
  thread and a batch of one, the model and the masks both run on the calling thread);
- per-step latency: the time between consecutive tokens, read from a `streamer` (which
  `generate` calls once per token). Steps after the first token only, so every step is one
  single-token forward pass plus token selection; the first step also holds the prefill;
- time to the first token: from the `generate` call to the first token (the library's setup,
  the prefill and the first selection), which tokens/s includes and the steps do not;
- processor time: each call of the maskforge processor (advance the session by the previous
  token, write the mask, apply it to the logits), timed by a thin wrapper.

Reported per schema: the tokens generated, whether the output completed, tokens/s of each run
and their ratio (constrained / unconstrained tokens/s, the median over repetitions of each
pair's ratio; the same from CPU time),
median and p99 per-step latency (pooled over all repetitions' steps), and the share of the
constrained `generate` wall time spent inside the processor. Greedy output is deterministic,
so every repetition of a schema generates the same tokens (checked).

    python integration/end_to_end.py [--model DIR] [--gguf-file NAME] [--max-new-tokens 128]
        [--repeats 5] [--warmup 1] [--threads 1] [--schemas NAME ...] [--json OUT]

`--model` defaults to the vendored stories260K TinyStories Llama (tests/data/models). A GGUF
model is read from `--model DIR --gguf-file NAME` (needs the `gguf` and `accelerate` packages).
Models are read from local files only.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

import maskforge

REPO = Path(__file__).resolve().parent.parent
DEFAULT_MODEL = REPO / "tests" / "data" / "models" / "stories260K"


def closed_object(properties: Dict[str, Any], required: Sequence[str]) -> Dict[str, Any]:
    return {"type": "object", "properties": properties, "required": list(required),
            "additionalProperties": False}


# Strings, integers and arrays are bounded so that a small model cannot run on past the budget.
SCHEMAS: Dict[str, Dict[str, Any]] = {
    "object": closed_object({
        "name": {"type": "string", "maxLength": 24},
        "age": {"type": "integer", "minimum": 0, "maximum": 120},
        "role": {"enum": ["admin", "editor", "viewer"]},
    }, ["name", "age", "role"]),
    "array-of-objects": {
        "type": "array", "minItems": 1, "maxItems": 3,
        "items": closed_object({
            "id": {"type": "integer", "minimum": 0, "maximum": 999},
            "done": {"type": "boolean"},
            "tags": {"type": "array", "maxItems": 2, "items": {"type": "string", "maxLength": 8}},
        }, ["id", "done"]),
    },
    # No integers: the whole language is regular, so this one runs on the DFA arm.
    "anyof-pattern": {"anyOf": [
        closed_object({"sku": {"type": "string", "pattern": "^[A-Z]{3}-[0-9]{4}$"},
                       "express": {"type": "boolean"}}, ["sku", "express"]),
        closed_object({"email": {"type": "string", "pattern": "^[a-z]{1,8}@[a-z]{1,8}\\.(com|org)$"}},
                      ["email"]),
    ]},
}
PROMPTS = {
    "object": "Write a user profile as JSON with a name, an age and a role:",
    "array-of-objects": "Write a JSON list of up to three tasks, each with an id, done and tags:",
    "anyof-pattern": "Write a JSON order line with a SKU such as ABC-1234, or a contact email:",
}


# ---------------------------------------------------------------------------
# timing hooks


class StepClock:
    """A `generate` streamer that records when each token arrives (the prompt is put first)."""

    def __init__(self) -> None:
        self.times: List[float] = []

    def put(self, value: Any) -> None:
        self.times.append(time.perf_counter())

    def end(self) -> None:
        pass

    def step_seconds(self) -> List[float]:
        """Intervals between consecutive generated tokens (the prefill step left out)."""
        token_times = self.times[1:]
        return [later - earlier for earlier, later in zip(token_times, token_times[1:])]


class TimedProcessor:
    """Calls the maskforge processor and records how long each call takes."""

    def __init__(self, processor: maskforge.LogitsProcessor) -> None:
        self.processor = processor
        self.seconds: List[float] = []

    def reset(self) -> None:
        self.processor.reset()
        self.seconds = []

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        started = time.perf_counter()
        scores = self.processor(input_ids, scores)
        self.seconds.append(time.perf_counter() - started)
        return scores


# ---------------------------------------------------------------------------
# model and runs


def load_model(path: Path, gguf_file: Optional[str]):
    """(model, tokenizer) from local files only, on the CPU, in evaluation mode."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    options: Dict[str, Any] = {"local_files_only": True}
    if gguf_file:
        options["gguf_file"] = gguf_file
    tokenizer = AutoTokenizer.from_pretrained(str(path), **options)
    model = AutoModelForCausalLM.from_pretrained(str(path), **options).eval()
    return model, tokenizer


def prompt_text(tokenizer: Any, request: str) -> str:
    """`request` as a user turn when the tokenizer has a chat template, as is otherwise."""
    if getattr(tokenizer, "chat_template", None):
        messages = [{"role": "user", "content": request}]
        return tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    return request


def generate_once(model: Any, inputs: Dict[str, Any], *, max_new_tokens: int, pad_token_id: int,
                  processor: Optional[TimedProcessor]) -> Dict[str, Any]:
    """One greedy `generate` call: its generated ids, wall time and step intervals."""
    import torch

    clock = StepClock()
    options: Dict[str, Any] = {"max_new_tokens": max_new_tokens, "do_sample": False,
                               "pad_token_id": pad_token_id, "streamer": clock}
    if processor is None:
        # The baseline runs to the budget whatever the model predicts.
        options["min_new_tokens"] = max_new_tokens
    else:
        processor.reset()
        options["logits_processor"] = [processor]
    with torch.inference_mode():
        started, started_cpu = time.perf_counter(), time.thread_time()
        output = model.generate(**inputs, **options)
        seconds, cpu_seconds = time.perf_counter() - started, time.thread_time() - started_cpu
    prompt_length = inputs["input_ids"].shape[1]
    # Setup inside generate, the prefill and the first token's selection.
    first_token = clock.times[1] - started if len(clock.times) > 1 else seconds
    return {"tokens": output[0, prompt_length:].tolist(), "seconds": seconds, "cpu_seconds": cpu_seconds,
            "first_token": first_token, "steps": clock.step_seconds()}


def percentile(samples: Sequence[float], fraction: float) -> float:
    """Nearest-rank percentile (the median for 0.5 is statistics.median's)."""
    ordered = sorted(samples)
    if fraction == 0.5:
        return statistics.median(ordered)
    return ordered[min(len(ordered) - 1, int(len(ordered) * fraction))]


def completion_of(bound: maskforge.BoundSchema, tokens: Sequence[int]) -> bool:
    """Whether the generated tokens form a complete instance (or end it with EOS)."""
    session = bound.start_session()
    for token in tokens:
        if session.is_finished():
            break
        session.advance(token)
    return session.is_finished() or session.is_accepting()


def bench_schema(adapter: maskforge.TransformersModel, name: str, schema: Any, request: str, *,
                 max_new_tokens: int, repeats: int, warmup: int, max_json_whitespace: Optional[int]
                 ) -> Dict[str, Any]:
    model, tokenizer = adapter.model, adapter.tokenizer
    inputs = dict(tokenizer(prompt_text(tokenizer, request), return_tensors="pt"))

    started = time.perf_counter()
    processor = TimedProcessor(maskforge.LogitsProcessor(adapter, schema, max_json_whitespace=max_json_whitespace))
    setup_ms = (time.perf_counter() - started) * 1e3
    backend = maskforge.Compiler(max_json_whitespace=max_json_whitespace).compile(schema).backend

    def constrained() -> Dict[str, Any]:
        return generate_once(model, inputs, max_new_tokens=max_new_tokens, pad_token_id=adapter.pad_token_id,
                             processor=processor)

    # The first constrained run fixes the token count the baseline is held to.
    first = constrained()
    tokens = first["tokens"]
    count = len(tokens)

    def unconstrained() -> Dict[str, Any]:
        return generate_once(model, inputs, max_new_tokens=count, pad_token_id=adapter.pad_token_id,
                             processor=None)

    for _ in range(warmup):
        constrained()
        unconstrained()
    pairs = []
    for _ in range(repeats):
        timed_constrained = constrained()
        timed_constrained["processor"] = list(processor.seconds)
        timed_unconstrained = unconstrained()
        if timed_constrained["tokens"] != tokens:
            raise RuntimeError(f"{name}: greedy constrained output changed between repetitions")
        if len(timed_unconstrained["tokens"]) != count:
            raise RuntimeError(f"{name}: the baseline generated {len(timed_unconstrained['tokens'])} tokens, "
                               f"not {count}")
        pairs.append((timed_constrained, timed_unconstrained))

    eos = set(adapter.eos_token_ids)
    text_tokens = [token for token in tokens if token not in eos]
    text = adapter.token_text(text_tokens).decode("utf-8", errors="replace")
    complete = completion_of(processor.processor.bound, tokens)
    constrained_rates = [count / c["seconds"] for c, _ in pairs]
    unconstrained_rates = [count / u["seconds"] for _, u in pairs]
    constrained_steps = [s for c, _ in pairs for s in c["steps"]]
    unconstrained_steps = [s for _, u in pairs for s in u["steps"]]
    processor_calls = [s for c, _ in pairs for s in c["processor"]]
    return {
        "schema": name,
        "backend": backend,
        "prompt": request,
        "prompt_tokens": int(inputs["input_ids"].shape[1]),
        "generated_tokens": count,
        "ended_with_eos": bool(tokens) and tokens[-1] in eos,
        "complete": complete,
        "valid": validity(schema, text) if complete else None,
        "output": text,
        "setup_ms": setup_ms,
        "constrained_tokens_per_s": statistics.median(constrained_rates),
        "unconstrained_tokens_per_s": statistics.median(unconstrained_rates),
        "ratio": statistics.median([u["seconds"] / c["seconds"] for c, u in pairs]),
        "cpu_time_ratio": statistics.median([u["cpu_seconds"] / c["cpu_seconds"] for c, u in pairs]),
        "constrained_step_ms": summary_ms(constrained_steps),
        "unconstrained_step_ms": summary_ms(unconstrained_steps),
        "processor_call_ms": summary_ms(processor_calls),
        "constrained_first_token_ms": statistics.median(c["first_token"] for c, _ in pairs) * 1e3,
        "unconstrained_first_token_ms": statistics.median(u["first_token"] for _, u in pairs) * 1e3,
        "processor_share": statistics.median([sum(c["processor"]) / c["seconds"] for c, _ in pairs]),
        "samples": {"constrained_seconds": [c["seconds"] for c, _ in pairs],
                    "unconstrained_seconds": [u["seconds"] for _, u in pairs],
                    "constrained_cpu_seconds": [c["cpu_seconds"] for c, _ in pairs],
                    "unconstrained_cpu_seconds": [u["cpu_seconds"] for _, u in pairs]},
    }


def validity(schema: Any, text: str) -> Optional[bool]:
    """python-jsonschema's verdict on a completed output (None when it is not installed)."""
    try:
        import jsonschema
    except ImportError:
        return None
    try:
        instance = json.loads(text)
    except ValueError:
        return False
    return jsonschema.Draft202012Validator(schema).is_valid(instance)


def summary_ms(seconds: Sequence[float]) -> Dict[str, Optional[float]]:
    if not seconds:
        return {"p50": None, "p99": None, "count": 0}
    return {"p50": percentile(seconds, 0.5) * 1e3, "p99": percentile(seconds, 0.99) * 1e3, "count": len(seconds)}


def run(args: argparse.Namespace) -> Dict[str, Any]:
    import torch
    import transformers

    torch.set_num_threads(args.threads)
    transformers.utils.logging.disable_progress_bar()
    model, tokenizer = load_model(args.model, args.gguf_file)
    adapter = maskforge.from_transformers(model, tokenizer)
    parameters = sum(parameter.numel() for parameter in model.parameters())
    settings = {
        "model": str(args.model) + (f" ({args.gguf_file})" if args.gguf_file else ""),
        "parameters": parameters,
        "dtype": str(next(model.parameters()).dtype).replace("torch.", ""),
        "mask_vocab_size": adapter.vocabulary.mask_vocab_size,
        "max_new_tokens": args.max_new_tokens,
        "repeats": args.repeats,
        "warmup": args.warmup,
        "threads": torch.get_num_threads(),
        "cpus": os.cpu_count(),
        "max_json_whitespace": args.max_json_whitespace,
        "versions": {"python": platform.python_version(), "torch": torch.__version__,
                     "transformers": transformers.__version__, "maskforge": maskforge.__version__},
    }
    results = [
        bench_schema(adapter, name, SCHEMAS[name], args.prompt or PROMPTS[name], max_new_tokens=args.max_new_tokens,
                     repeats=args.repeats, warmup=args.warmup, max_json_whitespace=args.max_json_whitespace)
        for name in args.schemas
    ]
    return {"settings": settings, "results": results}


def print_report(report: Dict[str, Any]) -> None:
    settings = report["settings"]
    print(f"model {settings['model']}: {settings['parameters']:,} parameters ({settings['dtype']}), "
          f"{settings['mask_vocab_size']:,} logits; {settings['threads']} torch thread(s) on "
          f"{settings['cpus']} CPUs; greedy, batch 1, max_new_tokens {settings['max_new_tokens']}, "
          f"max_json_whitespace {settings['max_json_whitespace']}; {settings['repeats']} timed pairs of runs "
          f"after {settings['warmup']} warm-up pair(s)")
    print(", ".join(f"{name} {version}" for name, version in settings["versions"].items()))
    print()
    print("| schema | arm | tokens | complete | unconstrained tok/s | constrained tok/s | ratio | CPU-time ratio | "
          "step p50 / p99 unconstrained (ms) | step p50 / p99 constrained (ms) | processor p50 / p99 (ms) | "
          "processor share |")
    print("|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for row in report["results"]:
        print(f"| {row['schema']} | {row['backend']} | {row['generated_tokens']} | "
              f"{'yes' if row['complete'] else 'no (budget)'} | {row['unconstrained_tokens_per_s']:,.1f} | "
              f"{row['constrained_tokens_per_s']:,.1f} | {row['ratio']:.3f} | {row['cpu_time_ratio']:.3f} | "
              f"{pair_ms(row['unconstrained_step_ms'])} | {pair_ms(row['constrained_step_ms'])} | "
              f"{pair_ms(row['processor_call_ms'])} | {row['processor_share']:.1%} |")
    print()
    print("tokens: generated by the constrained run (a final EOS counted) and, exactly, by the unconstrained one; "
          "tok/s and ratio: medians over the timed pairs, from generate() wall time; CPU-time ratio: the same from "
          "the calling thread's CPU time (less sensitive to other load); steps: decoding steps after the first "
          "token, pooled over the timed runs; processor: each call of maskforge.LogitsProcessor (advance, mask, "
          "apply); share: of the constrained generate() wall time.")
    for row in report["results"]:
        print(f"{row['schema']}: prompt {row['prompt_tokens']} tokens; processor built in {row['setup_ms']:.1f} ms; "
              f"first token after {row['unconstrained_first_token_ms']:.1f} ms unconstrained, "
              f"{row['constrained_first_token_ms']:.1f} ms constrained (medians); output {row['output']!r}")


def pair_ms(summary: Dict[str, Optional[float]]) -> str:
    if summary["p50"] is None:
        return "-"
    return f"{summary['p50']:.3f} / {summary['p99']:.3f}"


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", type=Path, default=DEFAULT_MODEL,
                        help="a local Hugging Face model folder (default: the vendored stories260K)")
    parser.add_argument("--gguf-file", help="the .gguf file inside --model to load")
    parser.add_argument("--max-new-tokens", type=int, default=128)
    parser.add_argument("--repeats", type=int, default=5, help="timed pairs of runs per schema")
    parser.add_argument("--warmup", type=int, default=1, help="untimed pairs of runs per schema")
    parser.add_argument("--threads", type=int, default=1, help="torch.set_num_threads")
    parser.add_argument("--max-json-whitespace", type=int, default=1)
    parser.add_argument("--schemas", nargs="+", choices=sorted(SCHEMAS), default=list(SCHEMAS))
    parser.add_argument("--prompt", help="one prompt for every schema instead of the built-in ones")
    parser.add_argument("--json", type=Path, help="write the report here")
    args = parser.parse_args(argv)
    if args.max_new_tokens <= 0 or args.repeats <= 0 or args.warmup < 0 or args.threads <= 0:
        parser.error("--max-new-tokens, --repeats and --threads must be positive, --warmup non-negative")
    report = run(args)
    print_report(report)
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))
    # A completed output that does not validate is a bug; so is a ratio that is not a number.
    bad = [row["schema"] for row in report["results"]
           if not math.isfinite(row["ratio"]) or row["valid"] is False]
    if bad:
        print(f"unusable results for: {', '.join(bad)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Fast-forward in ``maskforge.Generator``: forward passes saved and the tokens/s change, on a
schema with long keys, with ``fast_forward`` off and on in the same run.

For each model and property order, the same prompts are generated greedily with each setting,
``--repeats`` times; the table gives forward passes, fast-forwarded tokens, generated tokens,
rows that ran out of ``--max-new-tokens``, the median wall time and generated tokens per second. Values must be identical in number and
valid either way (they may differ, since forced tokens change what the model reads).

    python integration/fast_forward.py [--smollm2 DIR] [--repeats 5] [--batch 1]

stories260K (vendored) always runs; ``--smollm2 DIR`` adds SmolLM2-135M-Instruct from the GGUF
file that ../shared/models/get-smollm2.sh extracts (needs the ``gguf`` and ``accelerate``
packages).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import jsonschema

import maskforge

REPO = Path(__file__).resolve().parent.parent
LONG_KEYS = {
    "type": "object",
    "properties": {
        "customer_full_name": {"type": "string", "maxLength": 24},
        "customer_is_subscribed_to_newsletter": {"type": "boolean"},
        "preferred_contact_channel": {"enum": ["email", "telephone", "post"]},
        "number_of_previous_orders": {"type": "integer", "minimum": 0, "maximum": 999},
        "account_created_in_the_mobile_application": {"type": "boolean"},
    },
    "required": ["customer_full_name", "customer_is_subscribed_to_newsletter", "preferred_contact_channel",
                 "number_of_previous_orders", "account_created_in_the_mobile_application"],
    "additionalProperties": False,
}
PROMPTS = ["A customer record as JSON:", "Customer:", "Write the customer's profile.", "Record:"]


def load(name: str, smollm2: str | None):
    import transformers

    if name == "stories260K":
        path = REPO / "tests" / "data" / "models" / "stories260K"
        return (transformers.AutoModelForCausalLM.from_pretrained(path).eval(),
                transformers.AutoTokenizer.from_pretrained(path))
    gguf = "SmolLM2-135M-Instruct.Q4_1.gguf"
    return (transformers.AutoModelForCausalLM.from_pretrained(smollm2, gguf_file=gguf).eval(),
            transformers.AutoTokenizer.from_pretrained(smollm2, gguf_file=gguf))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--smollm2", help="a folder holding SmolLM2-135M-Instruct.Q4_1.gguf")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--batch", type=int, default=1, help="prompts a call (1: each prompt alone)")
    parser.add_argument("--max-new-tokens", type=int, default=192)
    args = parser.parse_args()
    models = ["stories260K"] + (["SmolLM2-135M-Instruct"] if args.smollm2 else [])
    print("| model | key order | fast_forward | forward passes | forced tokens | tokens | truncated | median s | "
          "tokens/s |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|")
    for name in models:
        model, tokenizer = load(name, args.smollm2)
        adapter = maskforge.from_transformers(model, tokenizer)
        for order in ("declared", "any"):
            generate = maskforge.Generator(adapter, LONG_KEYS, max_json_whitespace=0, property_order=order)
            batches = [PROMPTS[i:i + args.batch] for i in range(0, len(PROMPTS), args.batch)]
            rates = {}
            for fast in (False, True):
                times, passes, forced, tokens, truncated = [], 0, 0, 0, 0
                for repeat in range(args.repeats):
                    started = time.perf_counter()
                    for prompts in batches:
                        try:
                            values = generate(prompts, max_new_tokens=args.max_new_tokens, fast_forward=fast)
                        except maskforge.GenerationTruncatedError as error:
                            values = list(error.values.values())
                            truncated += repeat == 0
                        stats = generate.last_stats
                        if repeat == 0:
                            passes += stats.forward_passes
                            forced += stats.forced_tokens
                            for value in values:
                                jsonschema.validate(value, LONG_KEYS)
                            tokens += stats.generated_tokens
                    times.append(time.perf_counter() - started)
                median = statistics.median(times)
                rates[fast] = tokens / median
                print(f"| {name} | {order} | {fast} | {passes} | {forced} | {tokens} | {truncated} | {median:.3f} | "
                      f"{rates[fast]:.0f} |", flush=True)
            print(f"| {name} | {order} | speed-up | | | | | | {rates[True] / rates[False]:.2f}x |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

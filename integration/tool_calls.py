"""Tool calls in running text: MaskForge's triggered-tags template beside XGrammar's structural
tag (`triggered_tags`) and llguidance's `StructTag` grammar (lazy lexemes), on one tokenizer.

The constraint is the same in all three: free text in which `<tool_call>` starts a call, each
call `<tool_call>\\n` + one JSON value of the call schema (two tools: a forecast whose `days` is
an integer from 1 to 14 and whose `city` is required, and a search whose arguments are open to
more keys) + `\\n</tool_call>`, any number of calls, free text again after them. The script
feeds labelled texts, tokenized by the tokenizer, to each engine (every token checked against
the engine's mask, then EOS) and prints which texts each admits. The label is what the format
and JSON Schema say. It also times every mask along the admitted texts.

    pip install '.[bench]'
    python integration/tool_calls.py --tokenizer ../shared/tokenizers/qwen2.5.tokenizer.json --eos 151643
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path
from typing import Callable, Dict, List, Tuple

import numpy as np

CALL = {
    "anyOf": [
        {
            "type": "object",
            "properties": {
                "name": {"const": "get_forecast"},
                "arguments": {
                    "type": "object",
                    "properties": {"city": {"type": "string"}, "days": {"type": "integer", "minimum": 1, "maximum": 14}},
                    "required": ["city"],
                    "additionalProperties": False,
                },
            },
            "required": ["name", "arguments"],
            "additionalProperties": False,
        },
        {
            "type": "object",
            "properties": {
                "name": {"const": "search"},
                "arguments": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
            },
            "required": ["name", "arguments"],
            "additionalProperties": False,
        },
    ]
}

BEGIN, END, TRIGGER = "<tool_call>\n", "\n</tool_call>", "<tool_call>"


def call(body: str) -> str:
    return BEGIN + body + END


# (label, text, admitted by the format and the schemas)
TEXTS: List[Tuple[str, str, bool]] = [
    ("prose only", "No tool is needed for that.", True),
    ("JSON as prose", 'The answer is {"name": "search"}.', True),
    ("one call after prose", "Let me check." + call('{"name": "get_forecast", "arguments": {"city": "Oslo", "days": 3}}'), True),
    ("two calls, prose between and after",
     call('{"name": "search", "arguments": {"query": "rain"}}') + " and "
     + call('{"name": "get_forecast", "arguments": {"city": "Rome"}}') + "\nDone.", True),
    ("end text inside a string", call('{"name": "search", "arguments": {"query": "a</tool_call>b"}}'), True),
    ("spaces around JSON tokens", call('{ "name" : "search" , "arguments" : { "query" : "x" } }'), True),
    ("arguments before name", call('{"arguments": {"query": "x"}, "name": "search"}'), True),
    ("integer written 1.4e1", call('{"name": "get_forecast", "arguments": {"city": "Oslo", "days": 1.4e1}}'), True),
    ("integer written 3.0", call('{"name": "get_forecast", "arguments": {"city": "Oslo", "days": 3.0}}'), True),
    ("extra key in open arguments", call('{"name": "search", "arguments": {"query": "x", "lang": "en"}}'), True),
    ("unknown tool", call('{"name": "delete_all", "arguments": {}}'), False),
    ("days above maximum", call('{"name": "get_forecast", "arguments": {"city": "Oslo", "days": 99}}'), False),
    ("days not an integer", call('{"name": "get_forecast", "arguments": {"city": "Oslo", "days": 2.5}}'), False),
    ("required city missing", call('{"name": "get_forecast", "arguments": {"days": 2}}'), False),
    ("extra key in closed arguments", call('{"name": "get_forecast", "arguments": {"city": "O", "hours": 1}}'), False),
    ("days as a string", call('{"name": "get_forecast", "arguments": {"city": "Oslo", "days": "3"}}'), False),
    ("trigger then no call", "I would use <tool_call> here.", False),
    ("call without its end", BEGIN + '{"name": "search", "arguments": {"query": "x"}}', False),
    ("end cut short", BEGIN + '{"name": "search", "arguments": {"query": "x"}}\n</tool_cal', False),
]


def bit(mask, token: int) -> bool:
    return bool(int(mask.reshape(-1)[token >> 5]) >> (token & 31) & 1)


class Engine:
    """`compile()` builds the constraint; `matcher()` a fresh matcher with `mask()` (fills and
    returns the bitmask) and `consume(token)`."""

    name = ""


class MaskForge(Engine):
    name = "maskforge"

    def __init__(self, tokenizer_path: Path, eos: int, hf) -> None:
        import maskforge

        self.vocabulary = maskforge.Vocabulary.from_tokenizer_json(tokenizer_path, eos_token_id=eos)
        self.maskforge = maskforge

    def compile(self):
        template = {"tags": [{"begin": BEGIN, "content": {"json": CALL}, "end": END}], "triggers": [TRIGGER]}
        compiler = self.maskforge.Compiler(executable_cache_bytes=0, trie_cache_bytes=0)
        self.bound = compiler.compile_template(template).bind(self.vocabulary)

    def matcher(self):
        bound = self.bound

        class Matcher:
            def __init__(self):
                self.session = bound.start_session()
                self.buffer = np.zeros(bound.mask_word_count, dtype=np.int32)

            def mask(self):
                self.session.write_mask(self.buffer)
                return self.buffer

            def consume(self, token: int) -> None:
                self.session.advance(token)

        return Matcher()


class XGrammar(Engine):
    name = "xgrammar"

    def __init__(self, tokenizer_path: Path, eos: int, hf) -> None:
        import xgrammar

        self.xgr = xgrammar
        self.info = xgrammar.TokenizerInfo.from_huggingface(hf, stop_token_ids=[eos])
        self.compiler = xgrammar.GrammarCompiler(self.info, cache_enabled=False)

    def compile(self):
        tag = {
            "type": "structural_tag",
            "format": {
                "type": "triggered_tags",
                "triggers": [TRIGGER],
                "tags": [{"type": "tag", "begin": BEGIN, "content": {"type": "json_schema", "json_schema": CALL},
                          "end": END}],
                "at_least_one": False,
                "stop_after_first": False,
            },
        }
        grammar = self.xgr.Grammar.from_structural_tag(json.dumps(tag))
        self.compiled = self.compiler.compile_grammar(grammar)

    def matcher(self):
        xgr, compiled, info = self.xgr, self.compiled, self.info

        class Matcher:
            def __init__(self):
                self.matcher = xgr.GrammarMatcher(compiled)
                self.buffer = xgr.allocate_token_bitmask(1, info.vocab_size)

            def mask(self):
                self.matcher.fill_next_token_bitmask(self.buffer)
                return self.buffer.numpy()

            def consume(self, token: int) -> None:
                if not self.matcher.accept_token(token):
                    raise ValueError("refused")

        return Matcher()


class LLGuidance(Engine):
    name = "llguidance"

    def __init__(self, tokenizer_path: Path, eos: int, hf) -> None:
        import llguidance
        import llguidance.hf
        import llguidance.numpy

        self.llg = llguidance
        self.tokenizer = llguidance.hf.from_tokenizer(hf, eos_token=eos)

    def compile(self):
        llg = self.llg
        tag = llg.StructTag(trigger=TRIGGER, begin=BEGIN, grammar=CALL, end=END)
        self.grammar = llg.StructTag.to_grammar([tag], assume_special=False)
        probe = llg.LLMatcher(self.tokenizer, self.grammar)
        if probe.is_error():
            raise ValueError(probe.get_error())

    def matcher(self):
        llg, tokenizer, grammar = self.llg, self.tokenizer, self.grammar

        class Matcher:
            def __init__(self):
                self.matcher = llg.LLMatcher(tokenizer, grammar)
                self.buffer = llg.numpy.allocate_token_bitmask(1, tokenizer.vocab_size)

            def mask(self):
                llg.numpy.fill_next_token_bitmask(self.matcher, self.buffer, 0)
                return self.buffer

            def consume(self, token: int) -> None:
                if not self.matcher.consume_token(token):
                    raise ValueError(self.matcher.get_error())

        return Matcher()


def run(engine: Engine, encode: Callable[[str], List[int]], eos: int) -> Dict:
    started = time.perf_counter()
    engine.compile()
    compile_ms = 1e3 * (time.perf_counter() - started)
    verdicts = {}
    times: List[float] = []
    for label, text, _ in TEXTS:
        matcher = engine.matcher()
        admitted = True
        for token in encode(text) + [eos]:
            started = time.perf_counter()
            mask = matcher.mask()
            times.append(time.perf_counter() - started)
            if not bit(mask, token):
                admitted = False
                break
            if token != eos:
                matcher.consume(token)
        verdicts[label] = admitted
    return {"compile_ms": compile_ms, "verdicts": verdicts, "mask_us": [1e6 * t for t in times]}


def percentile(values: List[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tokenizer", type=Path, required=True, help="a tokenizer.json")
    parser.add_argument("--eos", type=int, required=True, help="the EOS token id")
    parser.add_argument("--engines", nargs="+", default=["maskforge", "xgrammar", "llguidance"])
    args = parser.parse_args()
    from transformers import PreTrainedTokenizerFast

    hf = PreTrainedTokenizerFast(tokenizer_file=str(args.tokenizer))

    def encode(text: str) -> List[int]:
        return hf.encode(text, add_special_tokens=False)

    classes = {cls.name: cls for cls in (MaskForge, XGrammar, LLGuidance)}
    results = {}
    for name in args.engines:
        engine = classes[name](args.tokenizer, args.eos, hf)
        results[name] = run(engine, encode, args.eos)
    names = list(results)
    print("| text | expected | " + " | ".join(names) + " |")
    print("|---|---|" + "---|" * len(names))
    for label, _, expected in TEXTS:
        cells = []
        for name in names:
            got = results[name]["verdicts"][label]
            cells.append(("admits" if got else "refuses") + ("" if got == expected else " **wrong**"))
        print(f"| {label} | {'admit' if expected else 'refuse'} | " + " | ".join(cells) + " |")
    print()
    print("| engine | texts judged right | compile + bind (ms) | mask p50 (µs) | p99 | p99.9 | max | mean | masks |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name in names:
        r = results[name]
        right = sum(r["verdicts"][label] == expected for label, _, expected in TEXTS)
        m = r["mask_us"]
        print(f"| {name} | {right}/{len(TEXTS)} | {r['compile_ms']:.1f} | {percentile(m, 0.5):.1f} | "
              f"{percentile(m, 0.99):.1f} | {percentile(m, 0.999):.1f} | {max(m):.1f} | {statistics.mean(m):.1f} | {len(m)} |")


if __name__ == "__main__":
    main()

"""MaskForge behind the two logits-processor shapes serving engines call.

1. Per request, as vLLM's (V0) `SamplingParams(logits_processors=[...])` and Hugging Face TGI's
   grammar hooks do: a callable `(prompt_token_ids, output_token_ids, logits_row) -> logits_row`,
   one instance per request, which advances its own session by the tokens it has not seen.
2. Per batch, as engines with a persistent batch do (vLLM V1's batch-level processors, SGLang's
   grammar backends): one object that keeps a session per running request, writes every row's
   mask with one `fill_masks` call (GIL released) and applies them with one
   `apply_token_bitmask_inplace`. Requests join and leave between steps.

A tiny continuous-batching engine runs the same requests through both and checks that greedy
decoding gives the same answers. (For brevity the engine re-reads each row's whole text every
step; a real one keeps a key/value cache per row.)

    python examples/python/serving_adapter.py
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Sequence

import torch

import maskforge
from example_model import load_model

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"enum": ["Lily", "Tom", "Sue"]},
        "mood": {"enum": ["happy", "sad"]},
        "likes": {"type": "array", "items": {"enum": ["dogs", "cats", "rain"]}, "maxItems": 2},
    },
    "required": ["name", "mood", "likes"],
    "additionalProperties": False,
}
REQUESTS = ["Once upon a time", "Lily saw a dog", "The sun was hot", "Tom had a red ball", "A bird sang"]
MAX_BATCH = 3
MAX_STEPS = 400  # the schema's language is finite (strings from lists, no whitespace)


class RequestLogitsProcessor:
    """The per-request shape: `processor(prompt_token_ids, output_token_ids, logits)`, where
    `logits` is this request's 1-D row of the step's logits (masked in place and returned)."""

    def __init__(self, bound: maskforge.BoundSchema) -> None:
        self.session = bound.start_session()
        self.seen = 0
        self.mask = maskforge.allocate_token_bitmask(1, bound.mask_vocab_size, like=torch.empty(0))

    def __call__(self, prompt_token_ids: Sequence[int], output_token_ids: Sequence[int], logits: torch.Tensor) -> torch.Tensor:
        for token in output_token_ids[self.seen:]:
            self.session.advance(token)
        self.seen = len(output_token_ids)
        maskforge.fill_masks([self.session], self.mask)
        maskforge.apply_token_bitmask_inplace(logits.view(1, -1), self.mask)
        return logits


class BatchLogitsProcessor:
    """The batch shape: a session per running request, one `fill_masks` per step."""

    def __init__(self, max_batch: int, mask_vocab_size: int) -> None:
        self.sessions: Dict[str, maskforge.Session] = {}
        self.masks = maskforge.allocate_token_bitmask(max_batch, mask_vocab_size, like=torch.empty(0))

    def add_request(self, request_id: str, bound: maskforge.BoundSchema) -> None:
        self.sessions[request_id] = bound.start_session()

    def remove_request(self, request_id: str) -> None:
        del self.sessions[request_id]

    def apply(self, request_ids: Sequence[str], logits: torch.Tensor) -> torch.Tensor:
        """Masks `logits` (one row per request, in `request_ids` order) in place."""
        rows = self.masks[: len(request_ids)]
        maskforge.fill_masks([self.sessions[r] for r in request_ids], rows)
        maskforge.apply_token_bitmask_inplace(logits, rows)
        return logits

    def accept_token(self, request_id: str, token: int) -> bool:
        """Advances the request's session; True when its output is complete (EOS taken)."""
        session = self.sessions[request_id]
        session.advance(token)
        return session.is_finished()


@dataclass
class Request:
    request_id: str
    prompt_ids: List[int]
    processor: Optional[Callable] = None
    output_ids: List[int] = field(default_factory=list)
    finished: bool = False


def serve(model, adapter, bound, batch_processor: Optional[BatchLogitsProcessor]) -> Dict[str, str]:
    """A minimal continuous-batching loop: requests join while others run and leave when done."""
    waiting = [Request(f"r{i}", adapter.encode(prompt)) for i, prompt in enumerate(REQUESTS)]
    running: List[Request] = []
    answers: Dict[str, str] = {}
    with torch.inference_mode():
        for _ in range(MAX_STEPS):
            while waiting and len(running) < MAX_BATCH:
                request = waiting.pop(0)
                if batch_processor is None:
                    request.processor = RequestLogitsProcessor(bound)
                else:
                    batch_processor.add_request(request.request_id, bound)
                running.append(request)
            if not running:
                break
            texts = [r.prompt_ids + r.output_ids for r in running]
            width = max(len(t) for t in texts)
            input_ids = torch.full((len(running), width), adapter.pad_token_id)
            attention = torch.zeros((len(running), width), dtype=torch.long)
            for row, ids in enumerate(texts):  # left padding
                input_ids[row, width - len(ids):] = torch.tensor(ids)
                attention[row, width - len(ids):] = 1
            positions = (attention.cumsum(-1) - 1).clamp(min=0)
            logits = model(input_ids=input_ids, attention_mask=attention, position_ids=positions).logits[:, -1, :]
            if batch_processor is None:
                for row, request in enumerate(running):
                    request.processor(request.prompt_ids, request.output_ids, logits[row])
            else:
                batch_processor.apply([r.request_id for r in running], logits)
            for request, token in zip(running, logits.argmax(dim=-1).tolist()):
                if batch_processor is not None:
                    request.finished = batch_processor.accept_token(request.request_id, token)
                else:
                    # The engine stops a request on an EOS id, as serving engines do.
                    request.finished = token in adapter.vocabulary.eos_token_ids
                if not request.finished:
                    request.output_ids.append(token)
            for request in [r for r in running if r.finished]:
                running.remove(request)
                if batch_processor is not None:
                    batch_processor.remove_request(request.request_id)
                answers[request.request_id] = adapter.token_text(request.output_ids).decode()
    assert not waiting and not running, f"unfinished after {MAX_STEPS} steps"
    return answers


def main() -> None:
    model, tokenizer = load_model()
    adapter = maskforge.from_transformers(model, tokenizer)
    bound = maskforge.Compiler(max_json_whitespace=0).compile(SCHEMA).bind(adapter.vocabulary)
    per_request = serve(model, adapter, bound, None)
    batched = serve(model, adapter, bound, BatchLogitsProcessor(MAX_BATCH, bound.mask_vocab_size))
    assert per_request == batched, (per_request, batched)
    for request_id, answer in sorted(batched.items()):
        value = json.loads(answer)
        assert set(value) == {"name", "mood", "likes"} and len(value["likes"]) <= 2
        print(f"{request_id}: {answer}")


if __name__ == "__main__":
    main()

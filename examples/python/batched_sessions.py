"""Several sessions over one bound schema: a small continuous-batching loop.

The schema is compiled and bound once; every sequence gets its own session. Sequences join the
batch while others are running and leave it when their session finishes, as in a serving
engine: each step runs the model on the active rows, writes all their masks at once with
`fill_masks` (GIL released, threads for large batches), applies them with
`apply_token_bitmask_inplace` and advances each session by its row's token. (For brevity the
model re-reads each row's whole text every step; a server keeps a key/value cache per row.)

    python examples/python/batched_sessions.py
"""

from dataclasses import dataclass, field
from typing import List

import torch

import maskforge
from example_model import load_model

SCHEMA = {
    "type": "object",
    "properties": {"mood": {"enum": ["happy", "sad", "curious"]}, "ending": {"enum": ["good", "bad"]}},
    "required": ["mood", "ending"],
    "additionalProperties": False,
}
REQUESTS = ["Once upon a time", "Lily saw a dog", "The sun was hot", "Tom had a red ball", "A bird sang"]
MAX_BATCH = 3  # requests beyond this wait for a free row
MAX_STEPS = 200  # the schema's language is finite (no whitespace): every sequence ends well before


@dataclass
class Sequence:
    prompt: str
    session: maskforge.Session
    ids: List[int]
    generated: List[int] = field(default_factory=list)


def main() -> None:
    model, tokenizer = load_model()
    adapter = maskforge.from_transformers(model, tokenizer)
    bound = maskforge.Compiler(max_json_whitespace=0).compile(SCHEMA).bind(adapter.vocabulary)
    waiting = list(REQUESTS)
    active: List[Sequence] = []
    masks = maskforge.allocate_token_bitmask(MAX_BATCH, bound.mask_vocab_size, like=torch.empty(0))
    step = 0
    with torch.inference_mode():
        while (waiting or active) and step < MAX_STEPS:
            while waiting and len(active) < MAX_BATCH:  # join
                prompt = waiting.pop(0)
                active.append(Sequence(prompt, bound.start_session(), adapter.encode(prompt)))
                print(f"step {step:3}: + {prompt!r}")
            width = max(len(s.ids) for s in active)
            input_ids = torch.full((len(active), width), adapter.pad_token_id)
            attention = torch.zeros((len(active), width), dtype=torch.long)
            for row, sequence in enumerate(active):  # left padding
                input_ids[row, width - len(sequence.ids):] = torch.tensor(sequence.ids)
                attention[row, width - len(sequence.ids):] = 1
            positions = (attention.cumsum(-1) - 1).clamp(min=0)
            logits = model(input_ids=input_ids, attention_mask=attention, position_ids=positions).logits[:, -1, :]
            rows = masks[: len(active)]
            maskforge.fill_masks([s.session for s in active], rows)
            maskforge.apply_token_bitmask_inplace(logits, rows)
            for sequence, token in zip(active, logits.argmax(dim=-1).tolist()):
                sequence.session.advance(token)
                if not sequence.session.is_finished():
                    sequence.generated.append(token)
                    sequence.ids.append(token)
            for sequence in [s for s in active if s.session.is_finished()]:  # leave
                active.remove(sequence)
                print(f"step {step:3}: - {sequence.prompt!r} -> {adapter.token_text(sequence.generated).decode()}")
            step += 1
    assert not waiting and not active, f"unfinished after {MAX_STEPS} steps"


if __name__ == "__main__":
    main()

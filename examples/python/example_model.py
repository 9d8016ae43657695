"""The model every example runs on: $MASKFORGE_MODEL_ID, or the vendored stories260K.

MASKFORGE_MODEL_ID is a local folder or a Hugging Face hub id (the hub needs a network); a
folder holding a `.gguf` file (e.g. SmolLM2-135M-Instruct fetched with
`get-smollm2.sh DIR`) is loaded from it, which needs the `gguf` and `accelerate` packages.
Without it, the examples use the 260K-parameter TinyStories Llama in tests/data/models: real,
tiny and offline, but it writes children's stories, so its values are valid rather than apt.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Tuple

DEFAULT_MODEL = Path(__file__).resolve().parents[2] / "tests" / "data" / "models" / "stories260K"


def load_model() -> Tuple[Any, Any]:
    """(model, tokenizer) on the CPU, in evaluation mode."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model_id = os.environ.get("MASKFORGE_MODEL_ID") or str(DEFAULT_MODEL)
    options = {}
    path = Path(model_id)
    if path.suffix == ".gguf":
        model_id, options["gguf_file"] = str(path.parent), path.name
    elif path.is_dir() and not (path / "config.json").exists():
        ggufs = sorted(path.glob("*.gguf"))
        if ggufs:
            options["gguf_file"] = ggufs[0].name
    tokenizer = AutoTokenizer.from_pretrained(model_id, **options)
    model = AutoModelForCausalLM.from_pretrained(model_id, **options).eval()
    return model, tokenizer


def chat_prompt(tokenizer: Any, request: str) -> str:
    """`request` as a user turn when the tokenizer has a chat template, as is otherwise."""
    if getattr(tokenizer, "chat_template", None):
        messages = [{"role": "user", "content": request}]
        return tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    return request

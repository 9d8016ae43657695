"""The llama-cpp-python logits processor (``maskforge.integrations.llama_cpp``).

By default, without llama-cpp-python: the processor driven as ``Llama.generate`` calls it
(``input_ids`` of the prompt and the tokens so far, the sampled token fed back on the next
call, ``scores`` a strided float32 view of the whole vocabulary, the result returned), on
GPT-2's vocabulary; every mask is compared with a fresh session that replayed the generated
tokens. With llama-cpp-python installed and ``MASKFORGE_SMOLLM2`` naming a folder holding
``SmolLM2-135M-Instruct.Q4_1.gguf`` (``../shared/models/get-smollm2.sh``): the GGUF's own
vocabulary, and real completions and chat completions that validate.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import jsonschema
import numpy as np
import pytest

import maskforge
from maskforge.integrations.llama_cpp import LogitsProcessor

SCHEMA = {"type": "object", "properties": {"name": {"type": "string", "maxLength": 12}, "age": {"type": "integer", "minimum": 0, "maximum": 150}},
          "required": ["name", "age"], "additionalProperties": False}


def strided_scores(values):
    """Logits as llama-cpp-python hands them over: the ``logit`` field of a record array."""
    records = np.zeros(len(values), dtype=np.dtype([("id", np.intc), ("logit", np.single), ("p", np.single)], align=True))
    records["logit"] = values
    return records["logit"]


def generate(processor, prompt, rng, eos, max_tokens=200):
    """``Llama.generate``'s loop: the processor sees the prompt and every token but the one
    being sampled; the sampled token comes back in the next call's ``input_ids``."""
    ids = list(prompt)
    while len(ids) - len(prompt) < max_tokens:
        scores = processor(np.array(ids, dtype=np.intc), strided_scores(rng.standard_normal(processor.bound.mask_vocab_size)))
        token = int(np.argmax(scores))
        if token in eos:
            return ids[len(prompt):], True
        ids.append(token)
    return ids[len(prompt):], False


def allowed_of(scores):
    return np.isfinite(np.asarray(scores))


def test_generations_follow_the_schema_and_every_mask_is_a_fresh_sessions(gpt2_vocabulary):
    processor = LogitsProcessor(gpt2_vocabulary, SCHEMA)
    eos = set(gpt2_vocabulary.eos_token_ids)
    reference = maskforge.Compiler(max_json_whitespace=2).compile(SCHEMA).bind(gpt2_vocabulary)
    for seed in range(3):
        rng = np.random.default_rng(seed)
        prompt = [464, 3303, 318, 257]
        generated, ended = generate(processor, prompt, rng, eos)
        assert ended and processor.error is None
        text = b"".join(gpt2_vocabulary.token_bytes(t) for t in generated).decode()
        jsonschema.validate(json.loads(text), SCHEMA)
        assert processor.parse(text) == json.loads(text)
        # Replayed: each step's allowed tokens are the fresh session's (EOS alone once done,
        # no whitespace-only token first).
        for step in range(len(generated) + 1):
            session = reference.start_session()
            for t in generated[:step]:
                session.advance(t)
            scores = processor(np.array(prompt + generated[:step], dtype=np.intc), strided_scores(np.zeros(reference.mask_vocab_size)))
            if session.is_done():
                expected = np.zeros(reference.mask_vocab_size, dtype=bool)
                expected[list(eos)] = True
            else:
                row = np.zeros(reference.mask_word_count, dtype=np.uint32)
                session.write_mask(row)
                expected = np.unpackbits(row.view(np.uint8), bitorder="little")[: reference.mask_vocab_size].astype(bool)
                if step == 0:
                    expected &= np.array([not (b := gpt2_vocabulary.token_bytes(t)) or bool(b.strip(b" \t\n\r"))
                                          for t in range(reference.mask_vocab_size)])
            assert np.array_equal(allowed_of(scores), expected), step


def test_an_error_inside_the_callback_ends_the_output_and_is_raised_by_check(gpt2_vocabulary):
    processor = LogitsProcessor(gpt2_vocabulary, SCHEMA)
    eos = sorted(gpt2_vocabulary.eos_token_ids)
    prompt = [464, 3303]
    processor(np.array(prompt, dtype=np.intc), strided_scores(np.zeros(gpt2_vocabulary.mask_vocab_size)))
    refused = gpt2_vocabulary.token_bytes(0)  # "!" cannot start the object
    assert refused == b"!"
    scores = processor(np.array(prompt + [0], dtype=np.intc), strided_scores(np.zeros(gpt2_vocabulary.mask_vocab_size)))
    assert np.flatnonzero(allowed_of(scores)).tolist() == eos
    with pytest.raises(maskforge.TokenRejectedError):
        processor.check()
    # A new prompt starts a new generation, and forgets the error.
    scores = processor(np.array([100, 200, 300], dtype=np.intc), strided_scores(np.zeros(gpt2_vocabulary.mask_vocab_size)))
    processor.check()
    assert allowed_of(scores)[gpt2_vocabulary.token_bytes(90) == b"{" and 90]


def test_wrong_logit_widths_are_errors_not_misplaced_masks(gpt2_vocabulary):
    processor = LogitsProcessor(gpt2_vocabulary, SCHEMA)
    processor(np.array([1], dtype=np.intc), strided_scores(np.zeros(100)))
    with pytest.raises(ValueError):
        processor.check()


SMOLLM2 = os.environ.get("MASKFORGE_SMOLLM2")
GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"


@pytest.fixture(scope="module")
def llm():
    llama_cpp = pytest.importorskip("llama_cpp")
    if not SMOLLM2 or not (Path(SMOLLM2) / GGUF).exists():
        pytest.skip(f"set MASKFORGE_SMOLLM2 to a folder with {GGUF} (../shared/models/get-smollm2.sh)")
    return llama_cpp.Llama(model_path=str(Path(SMOLLM2) / GGUF), n_ctx=1024, n_threads=2, verbose=False, seed=1)


def test_the_gguf_vocabulary_spells_what_llama_cpp_detokenizes(llm):
    from maskforge.integrations.llama_cpp import vocabulary

    vocab = vocabulary(llm)
    assert vocab.mask_vocab_size == llm.n_vocab()
    assert llm.token_eos() in vocab.eos_token_ids
    text = 'Hello {"name": "Ada", "age": 36}\n  ünïcödé 😀'
    ids = llm.tokenize(text.encode(), add_bos=False, special=False)
    assert b"".join(vocab.token_bytes(t) for t in ids) == text.encode()


class Person:  # filled in by pydantic below, when it is installed
    pass


try:
    import pydantic

    class Person(pydantic.BaseModel):  # type: ignore[no-redef]
        name: str = pydantic.Field(max_length=12)
        age: int = pydantic.Field(ge=0, le=150)
except ImportError:  # pragma: no cover - the test extra has pydantic
    pass


@pytest.mark.parametrize("chat", [False, True], ids=["completion", "chat"])
@pytest.mark.parametrize("target", ["schema", "pydantic"])
def test_smollm2_completions_follow_the_target(llm, chat, target):
    import llama_cpp

    from maskforge.integrations.llama_cpp import vocabulary

    processor = LogitsProcessor(vocabulary(llm), SCHEMA if target == "schema" else Person)
    processors = llama_cpp.LogitsProcessorList([processor])
    if chat:
        out = llm.create_chat_completion(messages=[{"role": "user", "content": "A person as JSON, with name and age."}],
                                         max_tokens=80, temperature=0.8, logits_processor=processors)
        text = out["choices"][0]["message"]["content"]
    else:
        out = llm.create_completion("A person as JSON: ", max_tokens=80, temperature=0.8, logits_processor=processors)
        text = out["choices"][0]["text"]
    assert out["choices"][0]["finish_reason"] == "stop", text
    value = processor.parse(text)
    if target == "pydantic":
        assert isinstance(value, Person) and 0 <= value.age <= 150
    else:
        jsonschema.validate(value, SCHEMA)

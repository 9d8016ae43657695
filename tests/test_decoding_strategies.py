"""``maskforge.LogitsProcessor`` under every decoding strategy ``model.generate`` offers, on the
real stories260K Llama: greedy, sampling, beam search (with and without sampling),
``num_return_sequences``, assisted generation with an assistant model, and prompt lookup.

Each run checks the processor's masks at every call against a fresh session that replays the
row's generated tokens (so rows that swap, fork or are rolled back must get exactly their own
sequence's mask), validates every returned sequence with python-jsonschema, and shows, with the
same run without MaskForge or with a forward counter, that the strategy was really used.
``MASKFORGE_SMOLLM2`` (a directory with SmolLM2-135M-Instruct in transformers format) adds the
same checks on that model.
"""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
jsonschema = pytest.importorskip("jsonschema")

import maskforge  # noqa: E402
from conftest import DATA_DIR  # noqa: E402
from test_generation import CountingForward  # noqa: E402
from maskforge.tensors import unpack_token_bitmask  # noqa: E402

STORIES = DATA_DIR / "models" / "stories260K"
PET = {
    "type": "object",
    "properties": {"name": {"type": "string", "maxLength": 12}, "indoor": {"type": "boolean"},
                   "kind": {"enum": ["cat", "dog", "bird"]}},
    "required": ["name", "indoor", "kind"],
    "additionalProperties": False,
}
# Plain text, then a JSON value in the prompt that prompt lookup can copy drafts from.
LOOKUP_PROMPT = 'Pets: {"name": "Tom", "indoor": true, "kind": "cat"} and {"name": "'


class MaskChecker:
    """A logits processor run after MaskForge's: for every row it replays the row's generated
    tokens into a fresh session and asserts that exactly that session's allowed tokens are
    left finite (rows whose tokens the schema refuses must be left unmasked), under the
    processor's two rules: a done session offers EOS alone, and the first token is not
    whitespace alone."""

    def __init__(self, bound: maskforge.BoundSchema, prompt_length: int) -> None:
        self.bound = bound
        self.prompt_length = prompt_length
        vocabulary = bound.vocabulary
        self.eos = set(vocabulary.eos_token_ids)
        self.whitespace = [bool(text) and not text.strip(b" \t\n\r")
                           for text in (vocabulary.token_bytes(t) or b"" for t in range(vocabulary.mask_vocab_size))]
        self.rows_checked = 0
        self.calls = 0

    def __call__(self, input_ids, scores):
        self.calls += 1
        width = scores.shape[-1]
        for row, sequence in enumerate(input_ids.tolist()):
            session = self.bound.start_session()
            refused = False
            for token in sequence[self.prompt_length:]:
                if session.is_finished():
                    break
                if not session.is_allowed(token):
                    refused = True
                    break
                session.advance(token)
            finite = torch.isfinite(scores[row]) & (scores[row] > torch.finfo(scores.dtype).min)
            if refused:
                assert bool(finite.all()), "a refused row must be left unmasked"
                continue
            mask = torch.zeros(session.mask_word_count, dtype=torch.int32)
            session.write_mask(mask.numpy())
            allowed = unpack_token_bitmask(mask, width).bool().reshape(-1)
            if not session.is_finished() and session.is_done():
                allowed = torch.tensor([t in self.eos for t in range(width)])
            elif len(sequence) == self.prompt_length:
                allowed &= ~torch.tensor(self.whitespace[:width] + [False] * (width - len(self.whitespace)))
            assert torch.equal(finite, allowed), f"row {row}: masks differ from a replaying session"
            self.rows_checked += 1
        return scores


@pytest.fixture(scope="module")
def stories():
    model = transformers.AutoModelForCausalLM.from_pretrained(STORIES).eval()
    tokenizer = transformers.AutoTokenizer.from_pretrained(STORIES)
    return model, tokenizer, maskforge.from_transformers(model, tokenizer)


@pytest.fixture(scope="module")
def random_assistant(stories):
    """A random-weight model over the same vocabulary: most of its drafts are refused by the
    target, so assisted decoding rolls back often."""
    model = stories[0]
    torch.manual_seed(0)
    config = copy.deepcopy(model.config)
    config.num_hidden_layers = 1
    return transformers.AutoModelForCausalLM.from_config(config).eval()


def generated(adapter, sequence, prompt_length):
    """The generated tokens of an output row, up to and excluding the first EOS."""
    tokens = []
    for token in sequence[prompt_length:]:
        if token in adapter.eos_token_ids:
            break
        tokens.append(token)
    return tokens


def run(stories, prompt, schema=PET, max_new_tokens=96, **options):
    model, tokenizer, adapter = stories
    inputs = tokenizer([prompt], return_tensors="pt")
    prompt_length = inputs["input_ids"].shape[1]
    processor = maskforge.LogitsProcessor(adapter, schema, max_json_whitespace=1)
    checker = MaskChecker(processor.bound, prompt_length)
    torch.manual_seed(7)
    output = model.generate(**inputs, logits_processor=[processor, checker], max_new_tokens=max_new_tokens,
                            pad_token_id=adapter.pad_token_id, **options)
    texts = []
    for sequence in output.tolist():
        text = adapter.token_text(generated(adapter, sequence, prompt_length)).decode("utf-8")
        jsonschema.validate(json.loads(text), schema)
        texts.append(text)
    assert checker.rows_checked > 0
    return texts, checker


def unconstrained(stories, prompt, max_new_tokens=24, **options):
    model, tokenizer, adapter = stories
    inputs = tokenizer([prompt], return_tensors="pt")
    torch.manual_seed(7)
    output = model.generate(**inputs, max_new_tokens=max_new_tokens, pad_token_id=adapter.pad_token_id,
                            min_new_tokens=max_new_tokens, **options)
    return output[:, inputs["input_ids"].shape[1]:].tolist()


SAMPLING = {"do_sample": True, "top_k": 0, "top_p": 1.0, "temperature": 1.0}


@pytest.mark.parametrize(
    "options, sequences",
    [
        ({"do_sample": False}, 1),
        (SAMPLING, 1),
        ({"do_sample": False, "num_beams": 3}, 1),
        ({"do_sample": False, "num_beams": 4, "num_return_sequences": 3}, 3),
        ({**SAMPLING, "num_beams": 2}, 1),
        ({**SAMPLING, "num_return_sequences": 4}, 4),
    ],
    ids=["greedy", "sampling", "beams", "beams-return-3", "beam-sampling", "sampling-return-4"],
)
def test_every_mask_is_the_replayed_sessions_and_every_value_is_valid(stories, options, sequences):
    texts, checker = run(stories, "My pet:", **options)
    assert len(texts) == sequences
    # Beam search scores num_beams rows a call; sampling with several sequences, that many rows.
    rows = max(options.get("num_beams", 1), options.get("num_return_sequences", 1))
    assert checker.rows_checked >= rows * 4


def test_beam_search_is_really_beam_search(stories):
    greedy = unconstrained(stories, "My pet:", do_sample=False)
    beams = unconstrained(stories, "My pet:", do_sample=False, num_beams=3)
    assert greedy != beams
    # Constrained, the best beam scores at least as well as greedy under the model.
    beam_texts, _ = run(stories, "My pet:", do_sample=False, num_beams=3)
    greedy_texts, _ = run(stories, "My pet:", do_sample=False)
    assert beam_texts != greedy_texts


def test_beams_returned_are_distinct_sequences(stories):
    model, tokenizer, adapter = stories
    inputs = tokenizer(["My pet:"], return_tensors="pt")
    processor = maskforge.LogitsProcessor(adapter, PET, max_json_whitespace=1)
    output = model.generate(**inputs, logits_processor=[processor], max_new_tokens=96, do_sample=False, num_beams=4,
                            num_return_sequences=4, pad_token_id=adapter.pad_token_id)
    sequences = {tuple(generated(adapter, sequence, inputs["input_ids"].shape[1])) for sequence in output.tolist()}
    # Distinct token sequences; two of them may spell one text (a rows ends once its value is done).
    assert len(sequences) == 4


@pytest.mark.parametrize("strategy", ["assistant-same", "assistant-random", "prompt-lookup"])
def test_assisted_decoding_gives_exactly_the_greedy_value(stories, random_assistant, strategy):
    """Assisted greedy decoding only changes how many forward passes the target makes: the
    constrained output must be token for token the constrained greedy output."""
    model = stories[0]
    prompt = LOOKUP_PROMPT if strategy == "prompt-lookup" else "My pet:"
    greedy, _ = run(stories, prompt, do_sample=False)
    options = {"prompt_lookup_num_tokens": 4} if strategy == "prompt-lookup" else {
        "assistant_model": copy.deepcopy(model) if strategy == "assistant-same" else random_assistant}
    forwards = CountingForward(model)
    try:
        assisted, checker = run(stories, prompt, do_sample=False, **options)
    finally:
        forwards.handle.remove()
    assert assisted == greedy
    new_tokens = len(stories[2].encode(greedy[0]))
    if strategy != "assistant-random":
        # Drafts were accepted: fewer target forward passes than generated tokens.
        assert forwards.calls < new_tokens, (forwards.calls, new_tokens)
    else:
        # Most random drafts are refused by the schema or the target, and rolled back.
        assert checker.calls > forwards.calls


def test_assisted_sampling_gives_valid_values(stories, random_assistant):
    texts, checker = run(stories, "My pet:", assistant_model=random_assistant, **SAMPLING)
    assert len(texts) == 1 and checker.rows_checked > 0


def test_one_processor_serves_generate_calls_in_turn(stories):
    model, tokenizer, adapter = stories
    processor = maskforge.LogitsProcessor(adapter, PET, max_json_whitespace=1)
    outputs = []
    for prompt in ["My pet:", "Lily", "My pet:"]:
        inputs = tokenizer([prompt], return_tensors="pt")
        output = model.generate(**inputs, logits_processor=[processor], max_new_tokens=96, do_sample=False,
                                pad_token_id=adapter.pad_token_id)
        outputs.append(generated(adapter, output[0].tolist(), inputs["input_ids"].shape[1]))
    assert outputs[0] == outputs[2]
    # A prompt that continues an earlier output is a new prompt, not a continuation of its session.
    first = tokenizer(["My pet:"])["input_ids"][0] + outputs[0]
    longer = torch.tensor([first + tokenizer(" and", add_special_tokens=False)["input_ids"]])
    output = model.generate(input_ids=longer, attention_mask=torch.ones_like(longer), logits_processor=[processor],
                            max_new_tokens=96, do_sample=False, pad_token_id=adapter.pad_token_id)
    text = adapter.token_text(generated(adapter, output[0].tolist(), longer.shape[1])).decode("utf-8")
    jsonschema.validate(json.loads(text), PET)


def test_processor_rows_keep_their_sessions_when_beams_swap(stories):
    """Calls given by hand: rows reordered, duplicated, jumping ahead and rolled back get their
    own sequence's session; a refused token leaves only its row unmasked."""
    _, tokenizer, adapter = stories
    processor = maskforge.LogitsProcessor(adapter, PET, max_json_whitespace=1)
    prompt = tokenizer(["My pet:"])["input_ids"][0]
    width = adapter.vocabulary.mask_vocab_size
    a = tokenizer('{"name": "Tom", "indoor": true, "kind": "dog"}', add_special_tokens=False)["input_ids"]
    b = tokenizer('{ "kind": "cat", "name": "Mia", "indoor": false}', add_special_tokens=False)["input_ids"]
    assert a[:3] != b[:3] and len(b) > 5
    probe = processor.bound.start_session()
    probe.advance_many(a[:3])
    refused = next(t for t in range(width) if not probe.is_allowed(t))
    checker = MaskChecker(processor.bound, len(prompt))
    calls = [
        [a[:0], a[:0]],
        [a[:1], b[:1]],
        [b[:2], a[:2]],  # rows swap
        [a[:3], b[:3]],
        [b[:1], a[:1]],  # both roll back
        [a[:3] + [refused], b[:4]],
        [a[:3] + [refused, a[3]], b[:5]],  # a refused row stays refused
        [a[:4], a[:4]],  # two rows share a past
    ]
    for rows in calls:
        input_ids = torch.tensor([prompt + row for row in rows])
        scores = processor(input_ids, torch.zeros((len(rows), width)))
        checker(input_ids, scores)
    assert checker.rows_checked == 2 * len(calls) - 2
    # A row whose parent was never seen is a new prompt (the first call of another generate).
    scores = processor(torch.tensor([prompt + a[:4] + b[:3]]), torch.zeros((1, width)))
    start = torch.zeros((1, processor.bound.mask_word_count), dtype=torch.int32)
    processor.bound.start_session().write_mask(start[0].numpy())
    not_whitespace = torch.tensor([not checker.whitespace[t] for t in range(width)])
    assert torch.equal(torch.isfinite(scores), unpack_token_bitmask(start, width).bool() & not_whitespace)


def test_a_processor_refuses_scores_off_the_cpu(stories):
    _, _, adapter = stories
    processor = maskforge.LogitsProcessor(adapter, PET)
    meta = torch.zeros((1, adapter.vocabulary.mask_vocab_size), device="meta")
    with pytest.raises(maskforge.UnsupportedGenerationModeError):
        processor(torch.tensor([[1, 2]]), meta)


SMOLLM2 = os.environ.get("MASKFORGE_SMOLLM2")
SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"


@pytest.fixture(scope="module")
def smollm2():
    if not SMOLLM2 or not Path(SMOLLM2).is_dir():
        pytest.skip("set MASKFORGE_SMOLLM2 to a folder with SmolLM2-135M-Instruct (../shared/models/get-smollm2.sh)")
    # The GGUF file get-smollm2.sh extracts, or a folder in transformers format.
    options = {"gguf_file": SMOLLM2_GGUF} if (Path(SMOLLM2) / SMOLLM2_GGUF).exists() else {}
    model = transformers.AutoModelForCausalLM.from_pretrained(SMOLLM2, **options).eval()
    tokenizer = transformers.AutoTokenizer.from_pretrained(SMOLLM2, **options)
    return model, tokenizer, maskforge.from_transformers(model, tokenizer)


@pytest.mark.parametrize("options", [{"num_beams": 3}, {"num_beams": 3, "num_return_sequences": 2},
                                     {"prompt_lookup_num_tokens": 4}, SAMPLING],
                         ids=["beams", "beams-return-2", "prompt-lookup", "sampling"])
def test_smollm2_strategies(smollm2, options):
    texts, checker = run(smollm2, LOOKUP_PROMPT, max_new_tokens=64, **{"do_sample": False, **options})
    assert texts and checker.rows_checked > 0


hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings, strategies as st  # noqa: E402


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2), st.integers(0, 2), st.integers(0, 60)), min_size=1, max_size=14))
def test_random_call_sequences_get_the_replayed_masks(stories, steps):
    """Any sequence of calls a decoding strategy can make (each row extends, repeats or rolls back
    a sequence already seen, rows swap and share pasts) gets, row by row, a replaying session's
    masks."""
    _, tokenizer, adapter = stories
    processor = maskforge.LogitsProcessor(adapter, PET, max_json_whitespace=1)
    prompt = tokenizer(["My pet:"])["input_ids"][0]
    width = adapter.vocabulary.mask_vocab_size
    texts = ['{"name": "Tom", "indoor": true, "kind": "dog"}', '{ "kind": "cat", "name": "Mia", "indoor": false}',
             '{"name": "Tim", "kind": "bird", "indoor": true}']
    streams = [tokenizer(text, add_special_tokens=False)["input_ids"] for text in texts]
    deepest = [-1, -1, -1]  # the longest prefix of each stream seen so far (none: not even the prompt)
    checker = MaskChecker(processor.bound, len(prompt))
    for first, second, length in steps:
        limit = min(deepest[first] + 1, deepest[second] + 1, len(streams[first]), len(streams[second]))
        length = length % (limit + 1)
        rows = [streams[first][:length], streams[second][:length]]
        for stream in (first, second):
            deepest[stream] = max(deepest[stream], length)
        # Streams that share a prefix have seen it too.
        for other, tokens in enumerate(streams):
            for row in rows:
                common = next((i for i, (x, y) in enumerate(zip(row, tokens)) if x != y), min(len(row), len(tokens)))
                deepest[other] = max(deepest[other], common)
        input_ids = torch.tensor([prompt + row for row in rows])
        checker(input_ids, processor(input_ids, torch.zeros((2, width))))
    assert checker.rows_checked == 2 * len(steps)

"""Generator, transformers adapter and logits processor, on real models and tokenizers.

The finite-target run lives in integration/generation_validity.py (the real stories260K Llama,
tiny random-weight GPT-2 and Llama models over the real GPT-2, Qwen2.5 and, where present,
Llama-3 tokenizers); the rest pins the API's behaviour: batches, sampling, budgets, rejected
modes, bad input, threads, and objects left unchanged.
"""

from __future__ import annotations

import copy
import json
import threading
from types import SimpleNamespace
from typing import List, Literal

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
pytest.importorskip("pydantic")
pytest.importorskip("jsonschema")

import jsonschema  # noqa: E402
import maskforge  # noqa: E402
from conftest import DATA_DIR, load_integration_script  # noqa: E402
from pydantic import BaseModel, ConfigDict  # noqa: E402

validity = load_integration_script("generation_validity")

STORIES = DATA_DIR / "models" / "stories260K"
PROMPTS = ["Once upon a time", "Lily", "The cat sat on the", "Tom went to the park and"]
SHORT_STRING = {"type": "string", "maxLength": 16}


@pytest.fixture(scope="module")
def stories():
    model = transformers.AutoModelForCausalLM.from_pretrained(STORIES).eval()
    tokenizer = transformers.AutoTokenizer.from_pretrained(STORIES)
    return model, tokenizer


@pytest.fixture(scope="module")
def adapter(stories):
    return maskforge.from_transformers(*stories)


# ---------------------------------------------------------------------------
# validity over finite schemas and types


@pytest.mark.parametrize(
    "model_name, seed",
    [("stories260K", 0), ("tiny-gpt2", 1), ("tiny-llama-qwen2.5", 2), ("tiny-llama-llama3", 3)],
)
def test_finite_targets_complete_into_valid_values(model_name, seed):
    if model_name == "tiny-llama-llama3" and validity.load_model(model_name) is None:
        pytest.skip("llama3.tokenizer.json not found under $MASKFORGE_TOKENIZERS")
    (report,) = validity.run([model_name], seed=seed, batch=2, max_new_tokens=96, max_json_whitespace=1)
    assert report.targets >= 50
    assert report.invalid == 0 and report.whitespace == 0, report.failures[:5]
    assert report.completed + report.truncated == report.rows
    # Truncation needs a long run of number spelling (1.000...) or string content: rare.
    assert report.truncated <= report.rows * 0.05, report.truncated_targets


def test_whitespace_run_helper_ignores_strings():
    assert validity.longest_whitespace_run('{ "a  b" :\n\n 1}') == 3
    assert validity.longest_whitespace_run('"\\"   "') == 0


# ---------------------------------------------------------------------------
# batches, sampling, budgets


def test_batched_greedy_equals_single_prompt_greedy(adapter):
    generate = maskforge.Generator(adapter, SHORT_STRING, max_json_whitespace=0)
    batched = generate(PROMPTS, max_new_tokens=40)
    assert batched == [generate(prompt, max_new_tokens=40) for prompt in PROMPTS]
    assert len(set(batched)) > 1, "prompts of different lengths must give different rows"


def test_seeded_sampling_is_reproducible_per_row(adapter):
    generate = maskforge.Generator(adapter, SHORT_STRING, max_json_whitespace=0)
    first = generate(PROMPTS, max_new_tokens=40, do_sample=True, seed=5, temperature=0.9, top_k=20, top_p=0.95)
    again = generate(PROMPTS, max_new_tokens=40, do_sample=True, seed=5, temperature=0.9, top_k=20, top_p=0.95)
    assert first == again
    # Row i draws from its own generator seeded seed + i, whatever the other rows do.
    alone = [generate(p, max_new_tokens=40, do_sample=True, seed=5 + i, temperature=0.9, top_k=20, top_p=0.95)
             for i, p in enumerate(PROMPTS)]
    assert first == alone
    greedy = generate(PROMPTS, max_new_tokens=40)
    assert first != greedy


class Pet(BaseModel):
    model_config = ConfigDict(extra="forbid")
    kind: Literal["cat", "dog"]
    vaccinated: bool


def test_types_come_back_as_their_type(adapter):
    pet = maskforge.Generator(adapter, Pet, max_json_whitespace=1)("My pet:", max_new_tokens=64)
    assert isinstance(pet, Pet)
    answers = maskforge.Generator(adapter, Literal["yes", "no"])(["Is it?", "Was it?"], max_new_tokens=16)
    assert len(answers) == 2 and all(answer in ("yes", "no") for answer in answers)
    pets = maskforge.Generator(adapter, List[Pet], max_json_whitespace=0)
    assert json.loads(pets.target.schema_json)["type"] == "array"


def test_truncation_reports_texts_and_completed_values(adapter):
    generate = maskforge.Generator(adapter, {"type": "string"}, max_json_whitespace=0)
    with pytest.raises(maskforge.GenerationTruncatedError) as caught:
        generate(PROMPTS[:2], max_new_tokens=3)
    error = caught.value
    assert isinstance(error, maskforge.MaskForgeError)
    assert len(error.texts) == 2 and all(text.startswith('"') for text in error.texts)
    assert error.values == {}


def test_policy_values_bind_once_each(adapter):
    generate = maskforge.Generator(adapter, Pet)
    assert generate.bound_schema(None) is generate.bound_schema(None)
    assert generate.bound_schema(1) is generate.bound_schema(1)
    assert generate.bound_schema(1) is not generate.bound_schema(None)
    text = maskforge.Generator(adapter, validity.raw_text_target(SHORT_STRING))(
        "Hi", max_new_tokens=40, max_json_whitespace=0)
    assert validity.longest_whitespace_run(text) == 0


def test_registries_are_served_and_not_kept_by_the_adapter(adapter):
    import gc
    import weakref

    class Registry:
        def __call__(self, uri):
            return {"enum": ["cat", "dog"]} if uri == "https://example.com/pet.json" else None

    registry = Registry()
    generate = maskforge.Generator(adapter, {"$ref": "https://example.com/pet.json"}, registry=registry)
    assert generate("My pet:", max_new_tokens=16) in ("cat", "dog")
    alive = weakref.ref(registry)
    del generate, registry
    gc.collect()
    assert alive() is None, "a registry outlived the Generator that used it"


# ---------------------------------------------------------------------------
# a scripted model: exact control of which token the model prefers


class ScriptedModel(torch.nn.Module):
    """A causal "LM" whose logits prefer `script[step]`: generation follows the script wherever
    the mask allows it, so budgets and EOS can be placed exactly."""

    def __init__(self, vocab_size: int, script: List[int]):
        super().__init__()
        self.config = SimpleNamespace(is_encoder_decoder=False)
        self.head = torch.nn.Linear(1, vocab_size, bias=False)
        self.script = script

    def get_output_embeddings(self):
        return self.head

    def forward(self, input_ids, attention_mask=None, cache=None, use_cache=True):
        step = 0 if cache is None else cache + 1
        logits = torch.zeros((input_ids.shape[0], 1, self.head.weight.shape[0]))
        if step < len(self.script):
            logits[:, :, self.script[step]] = 1.0
        return {"logits": logits, "cache": step}


@pytest.fixture(scope="module")
def gpt2_tokenizer(gpt2_tokenizer_path):
    return validity.tokenizer_from_json(gpt2_tokenizer_path.read_text("utf-8"), "<|endoftext|>")


def scripted(gpt2_tokenizer, text: str):
    ids = gpt2_tokenizer(text)["input_ids"]
    return maskforge.from_transformers(ScriptedModel(50257, ids), gpt2_tokenizer), len(ids)


def test_budget_end_returns_the_value_of_an_accepting_row(gpt2_tokenizer):
    adapter, length = scripted(gpt2_tokenizer, '"ok"   ')
    generate = maskforge.Generator(adapter, {"const": "ok"})
    # The script's whitespace keeps the row open (no EOS) until the budget ends: accepting, so a value.
    assert generate("x", max_new_tokens=length) == "ok"
    adapter, length = scripted(gpt2_tokenizer, '"ok"')
    with pytest.raises(maskforge.GenerationTruncatedError) as caught:
        maskforge.Generator(adapter, {"const": "ok"})("x", max_new_tokens=length - 1)
    assert caught.value.texts == ['"ok']


def test_masks_override_the_model(gpt2_tokenizer):
    adapter, _ = scripted(gpt2_tokenizer, '{"a": 1}')
    value = maskforge.Generator(adapter, {"enum": ["b", "c"]}, max_json_whitespace=0)("x", max_new_tokens=16)
    assert value in ("b", "c")


# ---------------------------------------------------------------------------
# rejected modes and bad input, before any work


class CountingForward:
    def __init__(self, model):
        self.calls = 0
        self.handle = model.register_forward_pre_hook(self._count)

    def _count(self, *_):
        self.calls += 1


@pytest.mark.parametrize(
    "options, error",
    [({"penalty_alpha": 0.6}, maskforge.UnsupportedGenerationModeError),
     ({"num_return_sequences": 2}, maskforge.InvalidArgumentError),  # greedy has one sequence a prompt
     ({"num_beams": 2, "num_return_sequences": 3}, maskforge.InvalidArgumentError),
     ({"num_beams": 0}, maskforge.InvalidArgumentError),
     ({"num_beams": 2.0}, maskforge.InvalidArgumentError),
     ({"assistant_model": object()}, maskforge.ArgumentTypeError),
     ({"prompt_lookup_num_tokens": 0}, maskforge.InvalidArgumentError),
     ({"prompt_lookup_num_tokens": 3, "num_beams": 2}, maskforge.InvalidArgumentError)],
)
def test_unsupported_generation_modes_are_rejected_before_any_work(adapter, options, error):
    counter = CountingForward(adapter.model)
    try:
        with pytest.raises(error):
            maskforge.Generator(adapter, Pet)("x", max_new_tokens=8, **options)
    finally:
        counter.handle.remove()
    assert counter.calls == 0


def test_beams_and_returned_sequences(adapter):
    generate = maskforge.Generator(adapter, Pet, max_json_whitespace=1)
    best = generate("My pet:", max_new_tokens=64, num_beams=3)
    assert isinstance(best, Pet)
    values = generate(["My pet:", "Lily"], max_new_tokens=64, num_beams=3, num_return_sequences=3)
    assert [len(group) for group in values] == [3, 3]
    assert values[0][0] == best  # the best beam comes first
    sampled = generate("My pet:", max_new_tokens=64, do_sample=True, num_return_sequences=2, seed=5)
    assert sampled == generate("My pet:", max_new_tokens=64, do_sample=True, num_return_sequences=2, seed=5)


def test_drafted_decoding_gives_the_greedy_values(adapter):
    generate = maskforge.Generator(adapter, Pet, max_json_whitespace=1)
    prompts = ["My pet:", "Lily"]
    greedy = generate(prompts, max_new_tokens=64)
    assert generate(prompts, max_new_tokens=64, prompt_lookup_num_tokens=3) == greedy
    assert generate(prompts, max_new_tokens=64, assistant_model=copy.deepcopy(adapter.model)) == greedy


@pytest.mark.parametrize(
    "call, error",
    [
        (lambda g: g(42, max_new_tokens=8), maskforge.ArgumentTypeError),
        (lambda g: g(["ok", 3], max_new_tokens=8), maskforge.ArgumentTypeError),
        (lambda g: g([], max_new_tokens=8), maskforge.InvalidArgumentError),
        (lambda g: g("x", max_new_tokens=0), maskforge.InvalidArgumentError),
        (lambda g: g("x", max_new_tokens=-3), maskforge.InvalidArgumentError),
        (lambda g: g("x", max_new_tokens=2.5), maskforge.ArgumentTypeError),
        (lambda g: g("x", max_new_tokens=8, temperature=0), maskforge.InvalidArgumentError),
        (lambda g: g("x", max_new_tokens=8, top_p=1.5), maskforge.InvalidArgumentError),
        (lambda g: g("x", max_new_tokens=8, top_k=-1), maskforge.InvalidArgumentError),
        (lambda g: g("x", max_new_tokens=8, beams=2), maskforge.InvalidArgumentError),
    ],
)
def test_bad_calls_fail_before_generation(adapter, call, error):
    generate = maskforge.Generator(adapter, Pet)
    counter = CountingForward(adapter.model)
    try:
        with pytest.raises(error):
            call(generate)
    finally:
        counter.handle.remove()
    assert counter.calls == 0


@pytest.mark.parametrize("target", [42, 3.5, None, object(), [1, 2]])
def test_a_target_must_be_a_type_or_a_schema(adapter, target):
    with pytest.raises(maskforge.ArgumentTypeError):
        maskforge.Generator(adapter, target)


def test_an_invalid_schema_fails_when_the_generator_is_built(adapter):
    with pytest.raises(maskforge.SchemaError):
        maskforge.Generator(adapter, {"type": "strin"})


def test_models_and_tokenizers_that_cannot_be_masked_are_rejected(stories):
    model, tokenizer = stories
    with pytest.raises(maskforge.InvalidArgumentError, match="language-model head"):
        maskforge.from_transformers(model.model, tokenizer)
    with pytest.raises(maskforge.InvalidArgumentError, match="fast tokenizer"):
        maskforge.from_transformers(model, SimpleNamespace(is_fast=False))
    with pytest.raises(maskforge.InvalidArgumentError):
        maskforge.from_transformers("not a model", tokenizer)
    on_meta = copy.deepcopy(model).to("meta")
    with pytest.raises(maskforge.UnsupportedGenerationModeError, match="meta"):
        maskforge.from_transformers(on_meta, tokenizer)
    encoder_decoder = transformers.T5ForConditionalGeneration(transformers.T5Config(
        vocab_size=64, d_model=8, d_kv=4, d_ff=16, num_layers=1, num_heads=2))
    with pytest.raises(maskforge.UnsupportedGenerationModeError, match="encoder-decoder"):
        maskforge.from_transformers(encoder_decoder, tokenizer)


def test_a_tokenizer_without_eos_is_rejected(gpt2_tokenizer_path):
    tokenizer = transformers.PreTrainedTokenizerFast(tokenizer_file=str(gpt2_tokenizer_path))
    assert tokenizer.eos_token_id is None
    model = validity.random_model("gpt2", 50257, 50256, 0)
    model.generation_config.eos_token_id = None
    with pytest.raises(maskforge.InvalidArgumentError, match="EOS"):
        maskforge.from_transformers(model, tokenizer)


def test_padded_logits_are_never_allowed(stories):
    # A model whose logits are wider than its tokenizer: the extra columns are masked out.
    model, tokenizer = stories
    adapter = maskforge.from_transformers(model, tokenizer)
    assert adapter.vocabulary.mask_vocab_size == model.get_output_embeddings().weight.shape[0]
    qwen = validity.load_model("tiny-llama-qwen2.5")
    wide = maskforge.from_transformers(*qwen)
    assert wide.vocabulary.mask_vocab_size == 151936 > wide.vocabulary.tokenizer_size
    session = wide.bind(SHORT_STRING).start_session()
    masks = maskforge.allocate_token_bitmask(1, 151936)
    maskforge.fill_masks([session], masks)
    allowed = maskforge.tensors.unpack_token_bitmask(masks, 151936)[0]
    assert allowed.any() and not allowed[wide.vocabulary.tokenizer_size:].any()


# ---------------------------------------------------------------------------
# shared objects: threads, and nothing mutated


def test_one_adapter_serves_threads(adapter):
    generate = maskforge.Generator(adapter, SHORT_STRING, max_json_whitespace=0)
    pets = maskforge.Generator(adapter, Pet, max_json_whitespace=1)
    expected = [generate(p, max_new_tokens=40) for p in PROMPTS] + [pets(p, max_new_tokens=64) for p in PROMPTS]
    results: List[object] = [None] * (2 * len(PROMPTS))
    errors: List[BaseException] = []

    def work(index: int) -> None:
        try:
            for _ in range(3):
                if index < len(PROMPTS):
                    results[index] = generate(PROMPTS[index], max_new_tokens=40)
                else:
                    results[index] = pets(PROMPTS[index - len(PROMPTS)], max_new_tokens=64)
        except BaseException as error:  # noqa: BLE001
            errors.append(error)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(results))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
    assert results == expected


def test_model_and_tokenizer_are_left_unchanged(stories):
    model, tokenizer = stories
    before = (tokenizer.padding_side, tokenizer.pad_token, tokenizer.truncation_side,
              json.dumps(model.config.to_dict(), sort_keys=True, default=str),
              json.dumps(model.generation_config.to_dict(), sort_keys=True, default=str), model.training)
    weights = {name: p.detach().clone() for name, p in model.named_parameters()}
    adapter = maskforge.from_transformers(model, tokenizer)
    maskforge.Generator(adapter, Pet, max_json_whitespace=1)(PROMPTS, max_new_tokens=64, do_sample=True, seed=1)
    after = (tokenizer.padding_side, tokenizer.pad_token, tokenizer.truncation_side,
             json.dumps(model.config.to_dict(), sort_keys=True, default=str),
             json.dumps(model.generation_config.to_dict(), sort_keys=True, default=str), model.training)
    assert before == after
    assert all(torch.equal(weights[name], p) for name, p in model.named_parameters())


# ---------------------------------------------------------------------------
# the logits processor inside model.generate


def test_logits_processor_matches_the_generator(adapter, stories):
    model, tokenizer = stories
    processor = maskforge.LogitsProcessor(adapter, Pet, max_json_whitespace=1)
    inputs = tokenizer("My pet:", return_tensors="pt")
    output = model.generate(**inputs, logits_processor=[processor], max_new_tokens=64, do_sample=False,
                            pad_token_id=adapter.pad_token_id)
    new_tokens = output[0, inputs["input_ids"].shape[1]:].tolist()
    # generate stops at EOS without calling the processor again: the session is left accepting.
    assert new_tokens[-1] in adapter.eos_token_ids and processor.sessions[0].is_accepting()
    text = adapter.token_text(new_tokens).decode("utf-8")
    assert Pet.model_validate_json(text) == maskforge.Generator(adapter, Pet, max_json_whitespace=1,
                                                                fast_forward=False)("My pet:", max_new_tokens=64)


LONG_KEYS = {
    "type": "object",
    "properties": {"customer_full_name": {"type": "string", "maxLength": 16},
                   "customer_is_subscribed_to_newsletter": {"type": "boolean"},
                   "preferred_contact_channel": {"enum": ["email", "telephone"]}},
    "required": ["customer_full_name", "customer_is_subscribed_to_newsletter", "preferred_contact_channel"],
    "additionalProperties": False,
}


@pytest.mark.parametrize("property_order", ["any", "declared"])
def test_fast_forward_saves_forward_passes_and_stays_valid(adapter, property_order):
    generate = maskforge.Generator(adapter, LONG_KEYS, max_json_whitespace=0, property_order=property_order)
    slow = generate(PROMPTS, max_new_tokens=160, fast_forward=False)
    slow_stats = generate.last_stats
    fast = generate(PROMPTS, max_new_tokens=160)
    fast_stats = generate.last_stats
    for value in slow + fast:
        jsonschema.validate(value, LONG_KEYS)
    assert slow_stats.forced_tokens == 0 and fast_stats.forced_tokens > 0
    assert fast_stats.forward_passes < slow_stats.forward_passes
    # Rows fast-forward different lengths in one batch: each row's value is its own prompt's.
    assert [generate(prompt, max_new_tokens=160) for prompt in PROMPTS] == fast


def test_fast_forward_appends_the_tokenizers_own_tokens(adapter, stories):
    _, tokenizer = stories
    generate = maskforge.Generator(adapter, LONG_KEYS, max_json_whitespace=0, property_order="declared")
    value = generate("My pet:", max_new_tokens=160)
    # With declared order every key is forced: the text the model wrote is the tokenizer's.
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    assert generate.last_stats.forced_tokens >= len(tokenizer(
        '"customer_is_subscribed_to_newsletter"', add_special_tokens=False)["input_ids"]) - 2
    assert text.startswith('{"customer_full_name":"')


# ---------------------------------------------------------------------------
# raw-text targets


def test_regex_and_choice_targets_return_raw_text(adapter, stories):
    import re

    date = maskforge.Generator(adapter, maskforge.Regex(r"[0-9]{4}-[0-9]{2}-[0-9]{2}"))
    values = date(PROMPTS, max_new_tokens=24)
    assert all(re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", value) for value in values), values
    # Leading whitespace is part of raw text: a pattern that starts with a space gets it.
    spaced = maskforge.Generator(adapter, maskforge.Regex(r" [a-z]{1,8}"))(PROMPTS[0], max_new_tokens=16)
    assert re.fullmatch(r" [a-z]{1,8}", spaced), spaced
    choices = ["the dog", "the cat", "a bird"]
    picked = maskforge.Generator(adapter, maskforge.Choice(choices))(PROMPTS, max_new_tokens=16)
    assert all(value in choices for value in picked), picked
    with pytest.raises(maskforge.InvalidArgumentError):
        date(PROMPTS[0], max_new_tokens=24, schema_in_prompt=True)
    # The logits processor inside model.generate gives the Generator's greedy text.
    model, tokenizer = stories
    processor = maskforge.LogitsProcessor(adapter, maskforge.Choice(choices))
    inputs = tokenizer(PROMPTS[0], return_tensors="pt")
    output = model.generate(**inputs, logits_processor=[processor], max_new_tokens=16, do_sample=False,
                            pad_token_id=adapter.pad_token_id)
    new_tokens = output[0, inputs["input_ids"].shape[1]:].tolist()
    assert new_tokens[-1] in adapter.eos_token_ids
    greedy = maskforge.Generator(adapter, maskforge.Choice(choices), fast_forward=False)(PROMPTS[0], max_new_tokens=16)
    assert adapter.token_text(new_tokens[:-1]).decode() == greedy


def test_tool_call_template_returns_validated_calls(adapter, stories):
    # Two tools with different argument schemas; the output starts with a call (a model this
    # small would rarely write the trigger itself), so every row is a parsed, validated call.
    import jsonschema

    tools = {
        "get_weather": {"type": "object", "properties": {"city": {"type": "string", "maxLength": 12},
                        "unit": {"enum": ["c", "f"]}}, "required": ["city", "unit"], "additionalProperties": False},
        "search": {"type": "object", "properties": {"query": {"type": "string", "maxLength": 12}},
                   "required": ["query"], "additionalProperties": False},
    }
    template = maskforge.templates.tool_calls(tools, text=False, parallel=False, max_whitespace=0)
    generate = maskforge.Generator(adapter, template)
    results = generate(PROMPTS, max_new_tokens=96)
    for result in results:
        assert isinstance(result, maskforge.ToolCalls) and result.text == ""
        (call,) = result.calls
        jsonschema.validate(call.arguments, tools[call.name])
    # Streamed, the pieces join into the text the template's parser reads into the same call.
    stream = generate.stream(PROMPTS[0], max_new_tokens=96)
    text = "".join(stream)
    assert text.startswith("<tool_call>\n") and text.endswith("\n</tool_call>")
    assert template.parse(text) == stream.value == results[0]
    # The logits processor inside model.generate writes the Generator's greedy text.
    model, tokenizer = stories
    processor = maskforge.LogitsProcessor(adapter, template)
    inputs = tokenizer(PROMPTS[0], return_tensors="pt")
    output = model.generate(**inputs, logits_processor=[processor], max_new_tokens=96, do_sample=False,
                            pad_token_id=adapter.pad_token_id)
    new_tokens = output[0, inputs["input_ids"].shape[1]:].tolist()
    assert new_tokens[-1] in adapter.eos_token_ids
    greedy = maskforge.Generator(adapter, template, fast_forward=False)
    assert template.parse(adapter.token_text(new_tokens[:-1]).decode()) == greedy(PROMPTS[0], max_new_tokens=96)

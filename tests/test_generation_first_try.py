"""What a first try with a Python type gets: closed objects, rows that stop when the value is
done, a first token that starts the value, chat prompts, streaming, batch jobs and the CLI.

Default runs use the real stories260K Llama; ``MASKFORGE_SMOLLM2`` (a folder with
SmolLM2-135M-Instruct, from ../shared/models/get-smollm2.sh) adds the README's call on that
model.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Dict, List

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
pydantic = pytest.importorskip("pydantic")

import maskforge  # noqa: E402
from conftest import DATA_DIR  # noqa: E402
from maskforge.generation import SCHEMA_INSTRUCTION  # noqa: E402
from pydantic import BaseModel, ConfigDict  # noqa: E402
from typing_extensions import TypedDict  # noqa: E402

STORIES = DATA_DIR / "models" / "stories260K"
SMOLLM2 = os.environ.get("MASKFORGE_SMOLLM2")
SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
# A minimal chat template for the stories260K tokenizer, which has none.
CHAT_TEMPLATE = (
    "{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}assistant: {% endif %}"
)


class Profile(BaseModel):
    name: str
    age: int


class Pet(BaseModel):
    """Bounded fields, so that a tiny model's values always validate (Pydantic refuses an
    integer such as -3.2e20, which the schema of a plain ``int`` admits)."""

    name: str = pydantic.Field(max_length=24)
    legs: int = pydantic.Field(ge=0, le=8)


class Address(BaseModel):
    city: str


class Person(BaseModel):
    name: str
    home: Address


class Open(BaseModel):
    model_config = ConfigDict(extra="allow")
    name: str


class Forbidding(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str


@dataclasses.dataclass
class Point:
    x: int


class Movie(TypedDict):
    title: str


class Tagged(TypedDict, extra_items=int):
    title: str


@pytest.fixture(scope="module")
def stories():
    model = transformers.AutoModelForCausalLM.from_pretrained(STORIES).eval()
    tokenizer = transformers.AutoTokenizer.from_pretrained(STORIES)
    return model, tokenizer


@pytest.fixture(scope="module")
def adapter(stories):
    return maskforge.from_transformers(*stories)


@pytest.fixture(scope="module")
def chat_adapter(stories):
    model, tokenizer = stories
    tokenizer = copy.deepcopy(tokenizer)
    tokenizer.chat_template = CHAT_TEMPLATE
    return maskforge.from_transformers(model, tokenizer)


def accepts(bound, adapter, text: str) -> bool:
    """Whether ``text`` is an accepted instance: its bytes, one single-byte token at a time."""
    session = bound.start_session()
    by_bytes = {adapter.vocabulary.token_bytes(t): t for t in range(adapter.vocabulary.mask_vocab_size)}
    try:
        for byte in text.encode():
            session.advance(by_bytes[bytes([byte])])
    except maskforge.TokenRejectedError:
        return False
    return session.is_accepting()


# ---------------------------------------------------------------------------
# 1. Python types generate closed objects


@pytest.mark.parametrize("target, extra, allowed", [
    (Profile, '{"name": "a", "age": 1, "zz": 2}', False),
    (Person, '{"name": "a", "home": {"city": "b", "zz": 2}}', False),
    (Forbidding, '{"name": "a", "zz": 2}', False),
    (Point, '{"x": 1, "zz": 2}', False),
    (Movie, '{"title": "a", "zz": 2}', False),
    (Open, '{"name": "a", "zz": 2}', True),
    (Tagged, '{"title": "a", "zz": 2}', True),
    (Tagged, '{"title": "a", "zz": "two"}', False),  # extra items are integers
])
def test_types_admit_the_fields_they_declare(adapter, target, extra, allowed):
    bound = maskforge.Generator(adapter, target).bound_schema()
    declared = json.loads(extra)
    declared.pop("zz", None)
    if "home" in declared:
        declared["home"].pop("zz")
    assert accepts(bound, adapter, json.dumps(declared))
    assert accepts(bound, adapter, extra) is allowed


def test_json_schema_targets_are_followed_as_written(adapter):
    schema = Profile.model_json_schema()  # Pydantic's own schema: extra keys open
    assert "additionalProperties" not in schema
    bound = maskforge.Generator(adapter, schema).bound_schema()
    assert accepts(bound, adapter, '{"name": "a", "age": 1, "zz": 2}')


def test_compile_of_a_type_is_closed_too():
    compiled = maskforge.Compiler().compile(Profile)
    vocabulary = maskforge.Vocabulary.from_tokenizer_json(
        str(DATA_DIR / "tokenizers" / "gpt2.tokenizer.json"), eos_token_id=50256)
    session = compiled.bind(vocabulary).start_session()
    ids = {vocabulary.token_bytes(t): t for t in range(vocabulary.tokenizer_size)}
    for byte in b'{"name":"a","':
        session.advance(ids[bytes([byte])])
    assert session.is_allowed(ids[b"a"]) and not session.is_allowed(ids[b"x"])


# ---------------------------------------------------------------------------
# 2. a row stops when its value is done; its first token starts the value


def test_the_issue_call_returns_two_profiles_on_stories260k(adapter):
    generate = maskforge.Generator(adapter, Profile)
    profiles = generate(["Profile one:", "Profile two:"], max_new_tokens=64)
    assert all(isinstance(p, Profile) for p in profiles)
    assert generate.last_stats.generated_tokens < 2 * 64


def test_rows_end_after_the_closing_brace_and_start_with_the_value(adapter):
    generate = maskforge.Generator(adapter, Pet)
    for prompt in ["Once upon a time", "Lily", "The cat sat on the"]:
        generate(prompt, max_new_tokens=200)
        (row,) = _last_rows(generate, adapter, prompt, 200)
        assert row.startswith("{") and row.endswith("}"), row


def _last_rows(generate, adapter, prompt, budget) -> List[str]:
    """The texts of a call, read through a stream of the same (greedy) call."""
    stream = generate.stream([prompt], max_new_tokens=budget)
    texts: Dict[int, str] = {}
    for row, piece in stream:
        texts[row] = texts.get(row, "") + piece
    return [texts[i] for i in sorted(texts)]


def test_a_root_number_waits_for_eos_or_whitespace(adapter):
    bound = maskforge.Generator(adapter, {"type": "integer"}).bound_schema()
    session = bound.start_session()
    digit = next(t for t in range(adapter.vocabulary.mask_vocab_size) if adapter.vocabulary.token_bytes(t) == b"7")
    session.advance(digit)
    assert session.is_accepting() and not session.is_done()


def test_the_processor_offers_eos_alone_once_done_and_no_leading_whitespace(adapter, stories):
    model, tokenizer = stories
    processor = maskforge.LogitsProcessor(adapter, Profile)
    prompt = tokenizer("Lily", return_tensors="pt")["input_ids"]
    width = model.config.vocab_size
    first = processor(prompt, torch.zeros((1, width)))
    session = maskforge.LogitsProcessor(adapter, Profile).bound.start_session()
    for token in range(width):
        text = adapter.vocabulary.token_bytes(token)
        allowed = session.is_allowed(token) and not (text and not text.strip(b" \t\n\r"))
        assert (first[0, token] == 0) == allowed, (token, text)
    # After a whole value, EOS is the one token left (the processor follows a row token by token).
    ids = tokenizer('{"name": "a", "age": 1}', add_special_tokens=False)["input_ids"]
    for n in range(1, len(ids) + 1):
        scores = processor(torch.cat([prompt, torch.tensor([ids[:n]])], dim=-1), torch.zeros((1, width)))
        finite = torch.isfinite(scores[0]).nonzero().flatten().tolist()
        assert (finite == sorted(adapter.eos_token_ids)) == (n == len(ids)), n
    output = model.generate(prompt, max_new_tokens=64, logits_processor=[maskforge.LogitsProcessor(adapter, Pet)],
                            do_sample=False, pad_token_id=adapter.pad_token_id)
    text = adapter.token_text(output[0, prompt.shape[1]:].tolist()).decode()
    assert text.startswith("{") and text.endswith("}") and output[0, -1].item() in adapter.eos_token_ids
    Pet.model_validate_json(text)


# ---------------------------------------------------------------------------
# 3. chat prompts


def test_chat_prompts_go_through_the_chat_template(chat_adapter):
    generate = maskforge.Generator(chat_adapter, Profile)
    chat = [{"role": "user", "content": "Make a profile."}]
    one = generate(chat, max_new_tokens=64)
    assert isinstance(one, Profile)
    both = generate([chat, "Profile two:"], max_new_tokens=64)
    assert both[0] == one and isinstance(both[1], Profile)
    rendered = chat_adapter.tokenizer.decode(chat_adapter.encode_chat(chat))
    assert rendered.endswith("user: Make a profile.\nassistant: ")


def test_schema_in_prompt_adds_the_documented_text(chat_adapter):
    generate = maskforge.Generator(chat_adapter, Profile, schema_in_prompt=True)
    run = generate._run(64, maskforge.generation._UNSET, None, None, {})
    instruction = SCHEMA_INSTRUCTION.format(schema=generate.target.schema_json)
    decode = chat_adapter.tokenizer.decode
    alone = decode(run.encode([{"role": "user", "content": "Hi"}]))
    assert alone.index("system: ") < alone.index(instruction) < alone.index("user: Hi")
    with_system = decode(run.encode([{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]))
    assert f"Be brief.\n\n{instruction}" in with_system and with_system.count("system: ") == 1
    plain = decode(run.encode("Hi"))
    assert plain.index(instruction) < plain.rindex("Hi")
    assert isinstance(generate([{"role": "user", "content": "Hi"}], max_new_tokens=64), Profile)


def test_bad_chats_and_missing_templates_are_typed_errors(adapter):
    generate = maskforge.Generator(adapter, Profile)
    with pytest.raises(maskforge.InvalidArgumentError, match="chat template"):
        generate([{"role": "user", "content": "Hi"}], max_new_tokens=8)
    with pytest.raises(maskforge.ArgumentTypeError, match="'role'"):
        generate([{"content": "Hi"}], max_new_tokens=8)
    with pytest.raises(maskforge.ArgumentTypeError):
        generate([["not a message"]], max_new_tokens=8)


# ---------------------------------------------------------------------------
# 4. streaming


@pytest.mark.parametrize("fast_forward", [True, False])
def test_stream_pieces_join_into_the_value_the_call_returns(adapter, fast_forward):
    generate = maskforge.Generator(adapter, Pet, fast_forward=fast_forward)
    stream = generate.stream("Lily", max_new_tokens=64)
    pieces = list(stream)
    assert all(isinstance(piece, str) for piece in pieces) and len(pieces) > 1
    assert Pet.model_validate_json("".join(pieces)) == stream.value == generate("Lily", max_new_tokens=64)


def test_a_batch_streams_row_tagged_pieces(adapter):
    generate = maskforge.Generator(adapter, Pet)
    prompts = ["Lily", "Tom went to the park and"]
    stream = generate.stream(prompts, max_new_tokens=64, do_sample=True, seed=3)
    texts: Dict[int, str] = {}
    for row, piece in stream:
        texts[row] = texts.get(row, "") + piece
    assert [Pet.model_validate_json(texts[i]) for i in range(2)] == stream.value
    assert stream.value == generate(prompts, max_new_tokens=64, do_sample=True, seed=3)


def test_value_runs_an_unread_stream_and_truncation_ends_the_iteration(adapter):
    generate = maskforge.Generator(adapter, Profile)
    assert generate.stream("Lily", max_new_tokens=64).value == generate("Lily", max_new_tokens=64)
    stream = generate.stream("Lily", max_new_tokens=3)
    with pytest.raises(maskforge.GenerationTruncatedError):
        list(stream)
    with pytest.raises(maskforge.UnsupportedGenerationModeError):
        generate.stream("Lily", num_beams=2)


# ---------------------------------------------------------------------------
# 5. batch jobs


def test_map_returns_values_in_order_and_keeps_the_rows_that_succeeded(adapter, capsys):
    generate = maskforge.Generator(adapter, Pet)
    prompts = ["Lily", "Once upon a time", 7, "The cat sat on the", "Tom went to the park and"]
    result = generate.map(prompts, batch_size=2, max_new_tokens=64, progress=True)
    assert len(result) == 5 and not result.ok
    assert isinstance(result.errors[2], maskforge.ArgumentTypeError) and result[2] is None
    # Each other prompt gets what a call of its own gets: its value, or the same truncation.
    for index, prompt in enumerate(prompts):
        if index == 2:
            continue
        try:
            alone = generate(prompt, max_new_tokens=64)
        except maskforge.GenerationTruncatedError:
            assert isinstance(result.errors[index], maskforge.GenerationTruncatedError) and result[index] is None
        else:
            assert index not in result.errors and result[index] == alone
    assert sum(value is not None for value in result) >= 2
    progress = capsys.readouterr().err
    assert "5/5" in progress


def test_map_records_rows_that_ran_out(adapter):
    generate = maskforge.Generator(adapter, {"type": "string", "maxLength": 2}, max_json_whitespace=0)
    result = generate.map(["Lily", "Tom"], batch_size=2, max_new_tokens=1)
    assert set(result.errors) == {0, 1}
    assert all(isinstance(e, maskforge.GenerationTruncatedError) for e in result.errors.values())
    with pytest.raises(maskforge.InvalidArgumentError):
        generate.map(["Lily"], batch_size=0)
    with pytest.raises(maskforge.InvalidArgumentError):
        generate.map(["Lily"], max_new_tokens=8, no_such_option=1)


# ---------------------------------------------------------------------------
# 6. the CLI


def run_cli(*args: str, cwd: Path = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "maskforge", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=300)


def test_cli_generates_from_a_schema_file_and_a_type(tmp_path):
    schema = tmp_path / "schema.json"
    schema.write_text(maskforge.targets.resolve_target(Pet).schema_json)  # closed, bounded
    result = run_cli("generate", "--model", str(STORIES), "--schema", str(schema), "--max-new-tokens", "64", "Lily")
    assert result.returncode == 0, result.stderr
    assert set(json.loads(result.stdout)) == {"name", "legs"}
    (tmp_path / "mymodels.py").write_text("from pydantic import BaseModel\nclass P(BaseModel):\n    name: str\n")
    result = run_cli("generate", "--model", str(STORIES), "--type", "mymodels:P", "--stream", "Lily", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert set(json.loads(result.stdout)) == {"name"}
    result = run_cli("generate", "--model", str(STORIES), "--type", "nomodule", "Lily")
    assert result.returncode == 1 and "MODULE:NAME" in result.stderr


# ---------------------------------------------------------------------------
# 7. the README's call on SmolLM2-135M-Instruct (opt-in)


@pytest.fixture(scope="module")
def smollm2():
    if not SMOLLM2 or not Path(SMOLLM2).is_dir():
        pytest.skip("set MASKFORGE_SMOLLM2 to a folder with SmolLM2-135M-Instruct (../shared/models/get-smollm2.sh)")
    options = {"gguf_file": SMOLLM2_GGUF} if (Path(SMOLLM2) / SMOLLM2_GGUF).exists() else {}
    model = transformers.AutoModelForCausalLM.from_pretrained(SMOLLM2, **options).eval()
    tokenizer = transformers.AutoTokenizer.from_pretrained(SMOLLM2, **options)
    return maskforge.from_transformers(model, tokenizer)


def test_the_issue_call_and_a_chat_on_smollm2(smollm2):
    generate = maskforge.Generator(smollm2, Profile)
    assert all(isinstance(p, Profile) for p in generate(["Profile one:", "Profile two:"], max_new_tokens=64))
    chat = [{"role": "user", "content": "Make up a profile of a person."}]
    assert isinstance(generate(chat, max_new_tokens=64), Profile)
    assert isinstance(generate(chat, max_new_tokens=64, schema_in_prompt=True), Profile)


def test_a_hermes_tool_call_on_smollm2(smollm2):
    """Two tools with different argument schemas and the model's own chat template; the output
    starts with the call (with free text first, SmolLM2, whose chat template knows no tools,
    writes prose or code and rarely the trigger): the model picks the tool and writes arguments
    that validate."""
    import jsonschema

    tools = {
        "get_weather": {"type": "object", "properties": {"city": {"type": "string", "maxLength": 24},
                        "unit": {"enum": ["celsius", "fahrenheit"]}}, "required": ["city", "unit"],
                        "additionalProperties": False},
        "search_web": {"type": "object", "properties": {"query": {"type": "string", "maxLength": 40}},
                       "required": ["query"], "additionalProperties": False},
    }
    template = maskforge.templates.tool_calls(tools, text=False, parallel=False)
    generate = maskforge.Generator(smollm2, template)
    chat = [
        {"role": "system", "content": "You call tools. Write <tool_call>, then a JSON object with the tool's name and "
                                      "arguments, then </tool_call>. Tools: get_weather(city, unit), search_web(query)."},
        {"role": "user", "content": "What is the weather in Paris, in celsius?"},
    ]
    result = generate(chat, max_new_tokens=128)
    (call,) = result.calls
    jsonschema.validate(call.arguments, tools[call.name])
    assert call.name == "get_weather", call


def test_the_readme_generation_block_runs(monkeypatch):
    """The README's generation example, as written, from the repository root."""
    readme = (DATA_DIR.parent.parent / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## Generation with transformers"):]
    block = section[section.index("```python") + len("```python"):section.index("```\n", section.index("```python"))]
    monkeypatch.chdir(DATA_DIR.parent.parent)
    namespace: Dict[str, object] = {}
    exec(compile(block, "README.md", "exec"), namespace)
    assert [type(p).__name__ for p in namespace["profiles"]] == ["Profile", "Profile"]
    assert type(namespace["profile"]).__name__ == "Profile"
    assert len(namespace["results"]) == 3

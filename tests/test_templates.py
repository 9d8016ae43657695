"""Templates from Python: the builders, the tool-call and reasoning formats, their parsers and
errors. Languages are checked against oracles written here from the formats' descriptions
(Python's ``json`` and python-jsonschema for the JSON parts), on generated texts and their
mutations; masks bit for bit against the per-token route (``Session.is_allowed``) on GPT-2,
Mistral and Qwen2.5, whose vocabulary spells ``<tool_call>`` as one token."""

import json
import lzma
import pathlib
import random
from typing import Literal

import jsonschema
import numpy
import pytest

import maskforge
from maskforge import templates as t

DATA = pathlib.Path(__file__).parent / "data" / "tokenizers"
TOKENIZERS = {
    "gpt2": DATA / "gpt2.tokenizer.json",
    "mistral": DATA / "mistral-v3.tokenizer.json",
    "qwen2.5": DATA / "qwen2.5.tokenizer.json.xz",
}

SEARCH = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "maxLength": 12},
        "sources": {"type": "array", "items": {"enum": ["web", "news"]}, "maxItems": 2},
    },
    "required": ["query"],
    "additionalProperties": False,
}


def weather_type():
    pydantic = pytest.importorskip("pydantic")

    class Weather(pydantic.BaseModel):
        city: str
        unit: Literal["c", "f"] = "c"

    return Weather


def vocabulary(name):
    path = TOKENIZERS[name]
    text = lzma.open(path, "rt").read() if path.suffix == ".xz" else path.read_text()
    return maskforge.Vocabulary.from_tokenizer_json_str(text)


# ---------------------------------------------------------------------------------------------
# oracles


def _no_constants(name):
    raise ValueError(f"{name} is not JSON")


def _unique_keys(pairs):
    keys = [k for k, _ in pairs]
    if len(keys) != len(set(keys)):
        raise DuplicateKeys()
    return dict(pairs)


class DuplicateKeys(Exception):
    """JSON Schema leaves objects with repeated keys undefined: such texts are not judged."""


WS = " \t\n\r"


def json_at(text, at, schema):
    """The end of the one JSON value of ``schema`` that starts at ``at`` (whitespace around it
    is the value's), or None."""
    decoder = json.JSONDecoder(parse_constant=_no_constants, object_pairs_hook=_unique_keys)
    while at < len(text) and text[at] in WS:
        at += 1
    try:
        value, end = decoder.raw_decode(text, at)
    except ValueError:
        return None
    if not jsonschema.Draft202012Validator(schema).is_valid(value):
        return None
    while end < len(text) and text[end] in WS:
        end += 1
    return end


def call_schema(tools, key):
    members = [
        {"type": "object", "properties": {"name": {"const": n}, key: s}, "required": ["name", key],
         "additionalProperties": False}
        for n, s in tools.items()
    ]
    return {"anyOf": members}


def hermes_oracle(text, tools, free_text=True, required=True):
    """Hermes / Qwen2.5 tool calls, from the format's description: free text without
    ``<tool_call>``, then ``<tool_call>\\n`` JSON ``\\n</tool_call>`` blocks joined by ``\\n``.
    The JSON's trailing whitespace and the ``\\n`` after it overlap, so every split is tried."""
    schema = call_schema(tools, "arguments")
    first = text.find("<tool_call>")
    if first < 0:
        return free_text and not required
    if first > 0 and not free_text:
        return False

    def blocks(at):
        if not text.startswith("<tool_call>\n", at):
            return False
        start = at + len("<tool_call>\n")
        # The value ends at some `\n</tool_call>`; try each (strings may hold the text).
        close = text.find("\n</tool_call>", start)
        while close >= 0:
            if json_at(text[:close], start, schema) == close:
                after = close + len("\n</tool_call>")
                if after == len(text) or (text.startswith("\n", after) and blocks(after + 1)):
                    return True
            close = text.find("\n</tool_call>", close + 1)
        return False

    return blocks(first)


def llama3_oracle(text, tools):
    """Llama-3 JSON tool calls: ``{"name": ..., "parameters": ...}`` objects joined by ``; ``."""
    schema = call_schema(tools, "parameters")
    ends = {0}
    reached = set()
    while ends:
        at = ends.pop()
        end = None
        # A value's own whitespace may precede the separator: try every split of it.
        for stop in range(at + 1, len(text) + 1):
            if stop == len(text) or text.startswith("; ", stop):
                if json_at(text[:stop], at, schema) == stop:
                    end = stop
                    if stop == len(text):
                        return True
                    nxt = stop + 2
                    if nxt not in reached:
                        reached.add(nxt)
                        ends.add(nxt)
        del end
    return False


def reasoning_oracle(text, schema):
    if not text.startswith("<think>"):
        return False
    close = text.find("</think>", len("<think>"))
    if close < 0:
        return False
    rest = text[close + len("</think>"):]
    # Up to two whitespace characters of the template's own, then one JSON value.
    return any(json_at(rest[k:], 0, schema) == len(rest) - k for k in range(0, 3) if rest[:k].strip(WS) == "")


def mutations(texts, rng, count):
    alphabet = ['<', '>', '/', '\n', '{', '}', '"', ':', ',', ' ', 'a', 'c', 'f', ';', '_', '\\', 'é', '</think>',
                '<tool_call>', '\n</tool_call>', '"name"', '"arguments"', '"parameters"']
    out = []
    for _ in range(count):
        text = rng.choice(texts)
        for _ in range(rng.randint(1, 3)):
            i = rng.randint(0, len(text))
            j = min(len(text), i + rng.randint(0, 3))
            op = rng.random()
            if op < 0.4:
                text = text[:i] + text[j:]
            elif op < 0.8:
                text = text[:i] + rng.choice(alphabet) + text[j:]
            else:
                text = text[:i] + text[i:j] * 2 + text[j:]
        out.append(text)
    return out


def judged(oracle, text):
    try:
        return oracle(text)
    except DuplicateKeys:
        return None


def assert_language(program, oracle, samples, rng, count):
    """``program`` accepts exactly what ``oracle`` does on ``samples`` and ``count`` mutations of
    them, which reach both answers."""
    verdicts = [(x, judged(oracle, x)) for x in samples + mutations(samples, rng, count)]
    for text, expected in verdicts:
        if expected is not None:
            assert program.accepts(text.encode()) is expected, text
    assert {v for _, v in verdicts} >= {True, False}


# ---------------------------------------------------------------------------------------------
# builders


def test_builders_write_the_documented_document():
    template = t.sequence(
        "Q: ",
        t.text(exclude=["\n"], max_bytes=40),
        t.literal("\nA: "),
        t.choice(t.regex("[0-9]+"), t.json({"enum": [True, None]})),
        t.repeat("!", min=1, max=3, separator=" "),
    )
    assert template.document == [
        "Q: ",
        {"text": {"exclude": ["\n"], "max_bytes": 40}},
        {"literal": "\nA: "},
        {"choice": [{"regex": "[0-9]+"}, {"json": {"enum": [True, None]}}]},
        {"repeat": "!", "min": 1, "max": 3, "separator": " "},
    ]
    assert maskforge.Template.from_json(template.to_json()) == template
    program = maskforge.Compiler().compile_template(template)
    assert program.output == "text"
    for text, accepted in [
        ("Q: why?\nA: 42!", True),
        ("Q: \nA: null! !", True),
        ("Q: a\nb\nA: 1!", False),
        ("Q: x\nA: true!!", False),
        ("Q: x\nA: 7! ! ! !", False),
    ]:
        assert program.accepts(text.encode()) is accepted, text
    # The same document as JSON text, as a dict/list and as a Template compiles to one program.
    compiler = maskforge.Compiler()
    texts = [b"Q: w\nA: 3!", b"Q: w\nA: 3"]
    for form in (template.to_json(), template.document, template):
        assert [compiler.compile_template(form).accepts(x) for x in texts] == [True, False]


def test_template_inputs_of_the_wrong_type_are_typed_errors():
    with pytest.raises(maskforge.ArgumentTypeError):
        maskforge.Template(3.5)
    with pytest.raises(maskforge.ArgumentTypeError):
        t.sequence("a", object())
    with pytest.raises(maskforge.InvalidArgumentError):
        maskforge.Template.from_json("[1,")
    with pytest.raises(maskforge.SchemaError) as info:
        maskforge.Compiler().compile_template({"tags": [{"begin": "<a>", "content": "x", "end": "</a>"}],
                                               "triggers": ["<b"]})
    assert (info.value.code, info.value.pointer) == ("MF-E002", "/triggers/0")
    with pytest.raises(maskforge.SchemaError) as info:
        maskforge.Compiler().compile_template(["x", {"regex": "(a"}])
    assert info.value.pointer == "/1/regex"


# ---------------------------------------------------------------------------------------------
# tool calls


def tools_under_test():
    return {"get_weather": weather_type(), "search": SEARCH}


def forecast_type():
    pydantic = pytest.importorskip("pydantic")

    class Forecast(pydantic.BaseModel):
        city: str
        days: int = pydantic.Field(ge=1, le=14)

    return Forecast


def structured_tools():
    """Argument schemas that need the structured arm: integers with bounds, an open object."""
    return {"forecast": forecast_type(), "echo": {"type": "object"}}


STRUCTURED_SAMPLES = [
    'Checking.<tool_call>\n{"name": "forecast", "arguments": {"city": "Oslo", "days": 3}}\n</tool_call>',
    '<tool_call>\n{"name": "echo", "arguments": {"a": [1, 2.5e3, {"}": "x"}], "b": null}} \n</tool_call>\n'
    '<tool_call>\n{"name": "forecast", "arguments": {"city": "R", "days": 1.4e1}}\n</tool_call>',
    '<tool_call>\n{"name": "echo", "arguments": {}}\n</tool_call>',
]


def tool_schemas(tools):
    return {n: (s if isinstance(s, dict) else json.loads(maskforge.targets.resolve_target(s).schema_json))
            for n, s in tools.items()}


HERMES_SAMPLES = [
    'Let me look.<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "unit": "f"}}\n</tool_call>',
    '<tool_call>\n{"arguments": {"query": "</tool_call>"}, "name": "search"}\n</tool_call>\n<tool_call>\n'
    '{"name": "get_weather", "arguments": {"city": "Oslo"}}\n</tool_call>',
    'I will search: <tool_call>\n {"name":"search","arguments":{"query":"x","sources":["news","web"]}} \n</tool_call>',
    'No call needed.',
    '<tool_call>\n{"name": "search", "arguments": {"query": "\u00e9"}}\n</tool_call>',
]


def test_hermes_tool_calls_admit_exactly_the_format():
    tools = tools_under_test()
    schemas = tool_schemas(tools)
    rng = random.Random(7)
    compiler = maskforge.Compiler()
    for free_text, required, parallel in [(True, True, True), (True, False, True), (False, True, False)]:
        template = t.tool_calls(tools, text=free_text, required=required, parallel=parallel, ordered=False)
        program = compiler.compile_template(template)

        def oracle(text):
            accepted = hermes_oracle(text, schemas, free_text, required)
            return accepted and (parallel or text.count("<tool_call>") <= 1)

        if free_text and required and parallel:
            assert all(program.accepts(x.encode()) for x in HERMES_SAMPLES[:3] + HERMES_SAMPLES[4:])
        assert_language(program, oracle, HERMES_SAMPLES, rng, 600)


def test_structured_tool_arguments_admit_exactly_the_format():
    tools = structured_tools()
    schemas = tool_schemas(tools)
    template = t.tool_calls(tools, ordered=False)
    program = maskforge.Compiler().compile_template(template)
    assert all(program.accepts(x.encode()) for x in STRUCTURED_SAMPLES)
    assert_language(program, lambda s: hermes_oracle(s, schemas), STRUCTURED_SAMPLES, random.Random(3), 600)
    parsed = template.parse(STRUCTURED_SAMPLES[1])
    assert parsed.calls[1].arguments == tools["forecast"](city="R", days=14)
    # Calls optional after free text: the call part is one hole, entered from the free text or
    # from the repeat after it, and the language is still exactly the format's.
    optional = maskforge.Compiler().compile_template(t.tool_calls(tools, required=False, ordered=False))
    assert optional.backend == "composite"
    assert optional.accepts(b"No call needed.")
    assert_language(optional, lambda s: hermes_oracle(s, schemas, True, False), STRUCTURED_SAMPLES, random.Random(5), 600)


def test_hermes_parse_returns_validated_calls():
    tools = tools_under_test()
    template = t.tool_calls(tools)
    calls = template.parse(HERMES_SAMPLES[1])
    assert calls.text == ""
    assert [c.name for c in calls.calls] == ["search", "get_weather"]
    assert calls.calls[0].arguments == {"query": "</tool_call>"}
    assert calls.calls[1].arguments == tools["get_weather"](city="Oslo")
    assert template.parse(HERMES_SAMPLES[0]).text == "Let me look."
    assert t.tool_calls(tools, required=False).parse("No call needed.") == maskforge.ToolCalls("No call needed.", [])


LLAMA3_SAMPLES = [
    '{"name": "search", "parameters": {"query": "q"}}',
    '{"name": "get_weather", "parameters": {"city": "Rome", "unit": "c"}}; {"name": "search", "parameters": '
    '{"query": "; {", "sources": []}}',
]


def test_llama3_tool_calls_admit_exactly_the_format():
    tools = tools_under_test()
    schemas = tool_schemas(tools)
    template = t.tool_calls(tools, format="llama3", ordered=False)
    program = maskforge.Compiler().compile_template(template)
    assert_language(program, lambda s: llama3_oracle(s, schemas), LLAMA3_SAMPLES, random.Random(11), 300)
    parsed = template.parse(LLAMA3_SAMPLES[1])
    assert [c.name for c in parsed.calls] == ["get_weather", "search"]
    assert parsed.calls[1].arguments == {"query": "; {", "sources": []}


def test_reasoning_then_json():
    weather = weather_type()
    schema = tool_schemas({"w": weather})["w"]
    template = t.reasoning(weather)
    program = maskforge.Compiler().compile_template(template)
    samples = ['<think>\nrain? </think >\n</think>\n\n{"city": "Lima", "unit": "c"}',
               '<think></think>{"city": "x"}']
    assert_language(program, lambda s: reasoning_oracle(s, schema), samples, random.Random(5), 300)
    parsed = template.parse(samples[0])
    assert parsed.reasoning == "\nrain? </think >\n"
    assert parsed.output == weather(city="Lima", unit="c")
    # Reasoning in front of tool calls, with the begin tag left to the prompt.
    calls = t.reasoning(t.tool_calls(tools_under_test()), begin=None)
    text = 'ok</think>\n<tool_call>\n{"name": "search", "arguments": {"query": "z"}}\n</tool_call>'
    assert maskforge.Compiler().compile_template(calls).accepts(text.encode())
    assert calls.parse(text).output.calls == [maskforge.ToolCall("search", {"query": "z"})]


def test_ordered_tool_calls_write_the_name_first_and_keys_as_declared():
    program = maskforge.Compiler().compile_template(t.tool_calls(tools_under_test(), text=False))
    call = '<tool_call>\n{}\n</tool_call>'.format
    assert program.accepts(call('{"name": "get_weather", "arguments": {"city": "Oslo", "unit": "c"}}').encode())
    assert program.accepts(call('{"name": "get_weather", "arguments": {"city": "Oslo"}}').encode())
    assert not program.accepts(call('{"arguments": {"city": "Oslo"}, "name": "get_weather"}').encode())
    assert not program.accepts(call('{"name": "get_weather", "arguments": {"unit": "c", "city": "Oslo"}}').encode())
    unordered = maskforge.Compiler().compile_template(t.tool_calls(tools_under_test(), text=False, ordered=False))
    assert unordered.accepts(call('{"arguments": {"unit": "c", "city": "Oslo"}, "name": "get_weather"}').encode())


def test_tool_call_errors_are_typed():
    tools = tools_under_test()
    with pytest.raises(maskforge.InvalidArgumentError):
        t.tool_calls(tools, format="chatml")
    with pytest.raises(maskforge.InvalidArgumentError):
        t.tool_calls({})
    with pytest.raises(maskforge.InvalidArgumentError):
        t.tool_calls(tools, text=False, required=False)
    with pytest.raises(maskforge.InvalidArgumentError):
        t.tool_calls(tools, format="llama3", text=True)
    with pytest.raises(maskforge.InvalidArgumentError):
        t.reasoning(SEARCH, end="")
    # A JSON part on the structured arm must start where nothing else can: not after free text.
    with pytest.raises(maskforge.SchemaError) as info:
        maskforge.Compiler().compile_template(t.sequence(t.text(), t.json(forecast_type())))
    assert (info.value.code, info.value.keyword, info.value.pointer) == ("MF-E004", "json", "/1/json")


# ---------------------------------------------------------------------------------------------
# masks


@pytest.mark.parametrize("name", ["gpt2", "mistral", "qwen2.5"])
def test_tool_call_and_reasoning_masks_equal_the_per_token_route(name):
    vocab = vocabulary(name)
    ids = range(vocab.mask_vocab_size)
    compiler = maskforge.Compiler()
    cases = [
        (t.tool_calls(tools_under_test()), HERMES_SAMPLES[0]),
        (t.tool_calls(tools_under_test()), HERMES_SAMPLES[4] + "\n" + HERMES_SAMPLES[0].split("look.")[1]),
        (t.reasoning(t.tool_calls(tools_under_test(), required=False)),
         '<think>hm</think>\n\n<tool_call>\n{"name": "search", "arguments": {"query": "é"}}\n</tool_call>'),
        # Structured arguments: values whose end a token may run past (`}` then newlines).
        (t.tool_calls(structured_tools(), max_whitespace=1), STRUCTURED_SAMPLES[0]),
        (t.tool_calls(structured_tools(), max_whitespace=1), STRUCTURED_SAMPLES[2]),
        (t.tool_calls(structured_tools(), max_whitespace=1),
         '<tool_call>\n{"name": "echo", "arguments": {"n": 7}}\n</tool_call>'),
        (t.reasoning(forecast_type()), '<think>a</think>\n{"city": "Oslo", "days": 2}'),
    ]
    single_token_tag = False
    for template, text in cases:
        bound = compiler.compile_template(template).bind(vocab)
        session = bound.start_session()
        data = text.encode()
        at = 0
        mask = bytearray(bound.mask_byte_count)
        steps = 0
        while True:
            session.write_mask(mask)
            bits = numpy.unpackbits(numpy.frombuffer(bytes(mask), dtype=numpy.uint8), bitorder="little")
            allowed = numpy.flatnonzero(bits[: vocab.mask_vocab_size]).tolist()
            route = [i for i in ids if session.is_allowed(i)]
            assert allowed == route, (name, text[:at])
            if at == len(data):
                break
            # The longest allowed token that spells the text next (the walk a model may take).
            token = max((i for i in allowed if (b := vocab.token_bytes(i)) and data.startswith(b, at)),
                        key=lambda i: len(vocab.token_bytes(i)))
            single_token_tag |= vocab.token_bytes(token) == b"<tool_call>"
            session.advance(token)
            at += len(vocab.token_bytes(token))
            steps += 1
        assert session.is_accepting()
        assert all(bits[e] for e in vocab.eos_token_ids)
        assert steps < len(data)
    # Qwen2.5 spells the trigger as one (non-special) added token, admitted as its text.
    assert single_token_tag is (name == "qwen2.5")


def test_a_grammar_is_refused_by_kind():
    with pytest.raises(maskforge.UnsupportedConstraintError) as info:
        maskforge.targets.resolve_target(maskforge.Grammar("start: /[a-z]+/"))
    assert info.value.kind == "grammar"
    assert "lark grammar" in str(info.value)
    # Typed like a bad argument, and it survives pickling (worker processes).
    import pickle

    again = pickle.loads(pickle.dumps(info.value))
    assert isinstance(again, ValueError) and again.kind == "grammar"


def test_mistral_tool_calls_place_the_special_token_by_id():
    vocab = vocabulary("mistral")
    template = t.tool_calls(structured_tools(), format="mistral")
    assert template.document[0] == {"special": "[TOOL_CALLS]"}
    bound = maskforge.Compiler().compile_template(template).bind(vocab)
    session = bound.start_session()
    mask = bytearray(bound.mask_byte_count)

    def allowed():
        session.write_mask(mask)
        bits = numpy.unpackbits(numpy.frombuffer(bytes(mask), dtype=numpy.uint8), bitorder="little")
        return numpy.flatnonzero(bits[: vocab.mask_vocab_size]).tolist()

    # Only the special token can start; no byte token spells it (`[TOOL_CALLS]` as text, `<0xFE>`).
    assert allowed() == [5] == [i for i in range(vocab.mask_vocab_size) if session.is_allowed(i)]
    session.advance(5)
    text = ' [{"name": "forecast", "arguments": {"city": "Oslo", "days": 2}}]'.encode()
    at = 0
    while at < len(text):
        ids = allowed()
        assert ids == [i for i in range(vocab.mask_vocab_size) if session.is_allowed(i)], text[:at]
        token = max((i for i in ids if (b := vocab.token_bytes(i)) and text.startswith(b, at)),
                    key=lambda i: len(vocab.token_bytes(i)))
        session.advance(token)
        at += len(vocab.token_bytes(token))
    assert session.is_accepting()
    parsed = template.parse(text.decode())
    (call,) = parsed.calls
    assert (call.name, call.arguments.city, call.arguments.days) == ("forecast", "Oslo", 2)
    # A vocabulary that does not name the token cannot bind the template.
    with pytest.raises(maskforge.VocabularyError, match="TOOL_CALLS"):
        maskforge.Compiler().compile_template(template).bind(vocabulary("gpt2"))


def test_llama3_calls_may_start_with_the_python_tag():
    template = t.tool_calls(structured_tools(), format="llama3", python_tag=True)
    assert template.document[0] == {"repeat": {"special": "<|python_tag|>"}, "min": 0, "max": 1}
    with pytest.raises(maskforge.InvalidArgumentError):
        t.tool_calls(structured_tools(), python_tag=True)
    program = maskforge.Compiler().compile_template(template)
    with pytest.raises(maskforge.VocabularyError, match="python_tag"):
        program.bind(vocabulary("gpt2"))
    # Llama 3.1's tokenizer names special token 128010 `<|python_tag|>`; the vendored Mistral
    # tokenizer, with one special token renamed so, stands in for it.
    document = json.loads(TOKENIZERS["mistral"].read_text())
    (renamed,) = [a for a in document["added_tokens"] if a["content"] == "[TOOL_CALLS]"]
    renamed["content"] = "<|python_tag|>"
    vocab = maskforge.Vocabulary.from_tokenizer_json_str(json.dumps(document))
    bound = program.bind(vocab)
    tag = renamed["id"]
    text = b'{"name": "echo", "parameters": {"x": 1}}'
    for first in ([tag], []):
        session = bound.start_session()
        for token in first:
            assert session.is_allowed(token)
            session.advance(token)
        assert session.is_allowed(tag) == (not first)  # once, and only before the call
        at = 0
        ids = {vocab.token_bytes(i): i for i in range(vocab.mask_vocab_size) if vocab.token_bytes(i)}
        while at < len(text):
            n = max(k for k in range(1, len(text) - at + 1) if text[at:at + k] in ids and session.is_allowed(ids[text[at:at + k]]))
            session.advance(ids[text[at:at + n]])
            at += n
        assert session.is_accepting()


def test_tool_arguments_with_nested_types_keep_their_references():
    pydantic = pytest.importorskip("pydantic")

    class Place(pydantic.BaseModel):
        city: str

    class Trip(pydantic.BaseModel):
        origin: Place
        stops: list[Place] = []

    call = '{"name": "plan", "arguments": {"origin": {"city": "a"}, "stops": [{"city": "b"}]}}'
    for format, text in [("hermes", f"<tool_call>\n{call}\n</tool_call>"),
                         ("llama3", call.replace('"arguments"', '"parameters"')),
                         ("mistral", f"[{call}]")]:
        template = t.tool_calls({"plan": Trip, "search": SEARCH}, format=format)
        program = maskforge.Compiler().compile_template(template)
        if format != "mistral":  # the special token in front is no byte text
            assert program.accepts(text.encode()), format
            assert not program.accepts(text.replace('"city": "b"', '"town": "b"').encode()), format
        (parsed,) = template.parse(text).calls
        assert parsed.arguments.stops[0].city == "b"

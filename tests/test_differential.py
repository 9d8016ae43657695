"""Differential test with hypothesis: for generated schemas and JSON values, MaskForge admits a
value through its masks (token by token, then EOS) exactly when python-jsonschema says it is
valid. Hypothesis shrinks any disagreement to a small schema and value.

The oracle's dialect is kept out of the way: patterns use only syntax on which Python's `re`
and ECMA-262 agree (no `$`, no `\\d` or `\\w`), formats are annotations, and numbers are judged
as exact decimals (integers by value), as in integration/liveness.py.
"""

import json

import pytest

pytest.importorskip("maskforge")
pytest.importorskip("jsonschema")
hypothesis = pytest.importorskip("hypothesis")

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from conftest import load_integration_script  # noqa: E402

liveness = load_integration_script("liveness")

KEYS = ["a", "b", "ab", "é"]
NUMBERS = [0, 1, -1, 2, 3, 2.5, -0.5, 10, 1e3, 0.1]
PATTERNS = ["^a", "b", "^[a-c]+", "^(ab)*b", "[0-9]", "^.{2}"]

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.sampled_from(NUMBERS),
    st.text(alphabet="ab0 é\"", max_size=4),
)
json_values = st.recursive(
    scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=3),
        st.dictionaries(st.sampled_from(KEYS), children, max_size=3),
    ),
    max_leaves=8,
)

leaf_schemas = st.one_of(
    st.just({}),
    st.builds(lambda t: {"type": t}, st.sampled_from(["null", "boolean", "integer", "number", "string", "array", "object"])),
    st.builds(lambda vs: {"enum": vs}, st.lists(scalars, min_size=1, max_size=3)),
    st.builds(lambda v: {"const": v}, json_values),
    st.builds(lambda k, n: {k: n}, st.sampled_from(["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"]), st.sampled_from(NUMBERS)),
    st.builds(lambda n: {"multipleOf": n}, st.sampled_from([2, 0.5, 3])),
    st.builds(lambda k, n: {k: n}, st.sampled_from(["minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties"]), st.integers(0, 3)),
    st.builds(lambda p: {"pattern": p}, st.sampled_from(PATTERNS)),
    st.just({"uniqueItems": True}),
    st.builds(lambda ks: {"required": sorted(set(ks))}, st.lists(st.sampled_from(KEYS), max_size=2)),
)


def combine(children):
    pair = st.lists(children, min_size=1, max_size=3)
    return st.one_of(
        st.builds(lambda ps: {"properties": ps}, st.dictionaries(st.sampled_from(KEYS), children, max_size=2)),
        st.builds(lambda s: {"additionalProperties": s}, children),
        st.builds(lambda s: {"items": s}, children),
        st.builds(lambda s: {"prefixItems": [s]}, children),
        st.builds(lambda s: {"contains": s}, children),
        st.builds(lambda s: {"propertyNames": s}, children),
        st.builds(lambda k, ss: {k: ss}, st.sampled_from(["anyOf", "allOf", "oneOf"]), pair),
        st.builds(lambda s: {"not": s}, children),
        st.builds(lambda i, t, e: {"if": i, "then": t, "else": e}, children, children, children),
        st.builds(lambda a, b: {**a, **b}, children, children),
    )


schemas = st.recursive(leaf_schemas, combine, max_leaves=6)


@pytest.fixture(scope="module")
def setup():
    import maskforge

    tokenizer = liveness.vocabulary_tokens()
    vocabulary = maskforge.Vocabulary.from_id_ordered_tokens(tokenizer.tokens, eos_token_id=tokenizer.eos_token_id)
    matcher = liveness.TokenMatcher(tokenizer.tokens)
    compiler = maskforge.Compiler(default_draft="2020-12", format_assertion=False)
    return maskforge, tokenizer, vocabulary, matcher, compiler


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(schema=schemas, values=st.lists(json_values, min_size=1, max_size=6))
def test_masks_admit_exactly_the_valid_values(setup, schema, values):
    maskforge, tokenizer, vocabulary, matcher, compiler = setup
    try:
        bound = compiler.compile(json.dumps(schema)).bind(vocabulary)
    except maskforge.SchemaError:
        return  # diagnosed (unsupported or unsatisfiable): nothing to compare
    validator = liveness.exact_validator(schema)
    for value in values:
        text = json.dumps(value).encode()
        valid = liveness.judge(validator, text)
        if valid is None:
            continue
        admitted = liveness.admits(bound, matcher, tokenizer.eos_token_id, text)
        assert admitted == valid, f"{'false accept' if admitted else 'false reject'}: {json.dumps(schema)} on {text!r}"

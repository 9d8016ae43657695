"""The SGLang backend (``maskforge.integrations.sglang``) driven through the call sequences of
SGLang's scheduler, without SGLang: the cache's ``copy`` per request, per-step vocab masks
applied to logits, jump-forward with retokenization, parallel sampling by ``copy`` mid-way,
rollback, terminated rows and refusals. Every mask is compared bit for bit with a fresh
session that replayed the tokens the request committed."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

import maskforge  # noqa: E402
from maskforge.integrations.sglang import MaskForgeGrammar, MaskForgeGrammarBackend, create_backend  # noqa: E402

from engine_replay import REQUESTS, Reference  # noqa: E402


@pytest.fixture(scope="module")
def tokenizer(gpt2_tokenizer_path):
    return transformers.PreTrainedTokenizerFast(tokenizer_file=str(gpt2_tokenizer_path), eos_token="<|endoftext|>")


@pytest.fixture(scope="module")
def backend(tokenizer):
    return MaskForgeGrammarBackend(tokenizer, len(tokenizer) + 3, [tokenizer.eos_token_id])


@pytest.fixture(scope="module")
def reference(backend):
    return Reference(backend.vocabulary)


def dispatch(backend, kind, spec):
    """What SGLang's cache does: compile once, hand each request a copy."""
    method = {"json": backend.dispatch_json, "regex": backend.dispatch_regex, "structural_tag": backend.dispatch_structural_tag}
    if kind == "json_object":
        return backend.dispatch_json("$$ANY$$").copy()
    return method[kind](spec).copy()


SUPPORTED = [r for r in REQUESTS if r[0] != "choice"]  # SGLang sends choices as regexes


def test_decoding_steps_match_fresh_sessions_and_mask_the_logits(backend, reference):
    plans = [(kind, spec, reference.tokens(kind, spec, text)) for kind, spec, text in SUPPORTED]
    grammars = [dispatch(backend, kind, spec) for kind, spec, _ in plans]
    committed = [[] for _ in plans]
    vocab = backend.vocab_size
    rng = torch.Generator().manual_seed(0)
    while not all(g.is_terminated() for g in grammars):
        mask = grammars[0].allocate_vocab_mask(vocab, len(grammars), "cpu")
        for i, grammar in enumerate(grammars):
            grammar.fill_vocab_mask(mask, i)
        mask = MaskForgeGrammar.move_vocab_mask(mask, "cpu")
        logits = torch.randn(len(grammars), vocab, generator=rng)
        MaskForgeGrammar.apply_vocab_mask(logits, mask)
        for i, ((kind, spec, tokens), grammar, done) in enumerate(zip(plans, grammars, committed)):
            expected = reference.mask(kind, spec, done)
            assert np.array_equal(mask[i].numpy(), expected), (kind, len(done))
            allowed = np.unpackbits(expected.view(np.uint8), bitorder="little")[:vocab].astype(bool)
            assert np.array_equal(torch.isfinite(logits[i]).numpy(), allowed)
            if grammar.is_terminated():
                continue
            grammar.accept_token(tokens[len(done)])
            done.append(tokens[len(done)])
    # After EOS, further tokens are ignored (the request is over).
    grammars[0].accept_token(plans[0][2][0])
    assert grammars[0].is_terminated()


def test_a_refused_token_raises_and_changes_nothing(backend, reference):
    kind, spec, text = SUPPORTED[0]
    tokens = reference.tokens(kind, spec, text)
    grammar = dispatch(backend, kind, spec)
    for t in tokens[:3]:
        grammar.accept_token(t)
    with pytest.raises(maskforge.TokenRejectedError):
        grammar.accept_token(reference.refused_token(kind, spec, tokens[:3]))
    mask = grammar.allocate_vocab_mask(backend.vocab_size, 1, "cpu")
    grammar.fill_vocab_mask(mask, 0)
    assert np.array_equal(mask[0].numpy(), reference.mask(kind, spec, tokens[:3]))
    grammar.rollback(2)
    grammar.fill_vocab_mask(mask, 0)
    assert np.array_equal(mask[0].numpy(), reference.mask(kind, spec, tokens[:1]))


def test_parallel_samples_copied_mid_way_go_their_own_ways(backend, reference):
    kind, spec = "regex", r"(cat|dog)s? [0-9]{1,3}"
    first = reference.tokens(kind, spec, "cat 12")
    second = reference.tokens(kind, spec, "cat 7")
    grammar = dispatch(backend, kind, spec)
    grammar.accept_token(first[0])
    assert first[0] == second[0]
    other = grammar.copy()
    for t in first[1:]:
        grammar.accept_token(t)
    for t in second[1:-1]:
        other.accept_token(t)
    assert grammar.is_terminated() and not other.is_terminated()
    mask = other.allocate_vocab_mask(backend.vocab_size, 1, "cpu")
    other.fill_vocab_mask(mask, 0)
    assert np.array_equal(mask[0].numpy(), reference.mask(kind, spec, second[:-1]))


@pytest.mark.parametrize("kind,spec,start", [
    ("regex", r"answer: (yes|no)", ""),
    ("json", json.dumps({"type": "object", "properties": {"label": {"enum": ["positive", "positron"]}}, "required": ["label"], "additionalProperties": False}), '{"'),
])
def test_jump_forward_appends_the_forced_text_and_retokenizes(tokenizer, reference, kind, spec, start):
    backend = MaskForgeGrammarBackend(tokenizer, len(tokenizer), [tokenizer.eos_token_id], any_whitespace=False)
    reference = Reference(backend.vocabulary, maskforge.Compiler(max_json_whitespace=0, executable_cache_bytes=0))
    grammar = dispatch(backend, kind, spec)
    output = tokenizer.encode(start) if start else []
    for t in output:
        grammar.accept_token(t)
    jumps = 0
    for _ in range(20):
        helper = grammar.try_jump_forward(tokenizer)
        if helper is None:
            # No forced text: the model picks a token (here, the first allowed one of the reference).
            mask = reference.mask(kind, spec, output).view(np.uint32)
            bits = np.unpackbits(mask.view(np.uint8), bitorder="little")
            if grammar.session.is_done():
                break
            token = int(np.flatnonzero(bits)[0])
            grammar.accept_token(token)
            output.append(token)
            continue
        text, state = grammar.jump_forward_str_state(helper)
        assert text and state == -1
        jumps += 1
        new_output = tokenizer.encode(tokenizer.decode(output) + text)
        grammar.jump_and_retokenize(output, new_output, state)
        output = new_output
        mask = grammar.allocate_vocab_mask(backend.vocab_size, 1, "cpu")
        grammar.fill_vocab_mask(mask, 0)
        assert np.array_equal(mask[0].numpy(), reference.mask(kind, spec, output))
    assert jumps >= 1
    assert grammar.session.is_accepting()


def test_refusals_are_invalid_grammars_never_unconstrained(backend, tokenizer):
    with pytest.raises(maskforge.UnsupportedConstraintError):
        backend.dispatch_ebnf('root ::= "a"')
    with pytest.raises(maskforge.SchemaError):
        backend.dispatch_json('{"type": 5}')
    assert [kind for kind, _, _ in backend.errors][-2:] == ["grammar", "json"]
    made = create_backend(None, tokenizer, len(tokenizer), [tokenizer.eos_token_id])
    assert isinstance(made, MaskForgeGrammarBackend)

"""The vLLM backend (``maskforge.integrations.vllm``) driven through the call sequences of
vLLM's ``StructuredOutputManager`` and scheduler, without vLLM: plain decoding, speculative
decoding with K = 1 and 4 and a refused draft, terminated rows, reset, and a batch of mixed
requests. Every row is compared bit for bit with a fresh session that replayed the tokens the
request committed. (tests/engines/ runs the same backend inside the real vLLM package.)"""

from __future__ import annotations

import random
from types import SimpleNamespace

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

import maskforge  # noqa: E402
from maskforge.integrations.vllm import MaskForgeBackend, fill_bitmasks  # noqa: E402

from engine_replay import REQUESTS, Reference  # noqa: E402


@pytest.fixture(scope="module")
def tokenizer(gpt2_tokenizer_path):
    return transformers.PreTrainedTokenizerFast(tokenizer_file=str(gpt2_tokenizer_path), eos_token="<|endoftext|>")


def make_backend(tokenizer, speculative_tokens=0, vocab_size=None, **config):
    speculative = SimpleNamespace(num_speculative_tokens=speculative_tokens) if speculative_tokens else None
    vllm_config = SimpleNamespace(speculative_config=speculative, structured_outputs_config=SimpleNamespace(**config))
    return MaskForgeBackend(vllm_config, tokenizer=tokenizer, vocab_size=vocab_size or len(tokenizer) + 7)


@pytest.fixture(scope="module")
def reference(tokenizer):
    return Reference(make_backend(tokenizer).vocabulary)


def step_rows(grammars, drafts, bitmask):
    """vLLM's ``grammar_bitmask``: per request, a row for each draft token and one more, the
    grammar advanced over the drafts as it goes and rolled back after; terminated requests get
    full rows. Returns the row index each (request, position) was written to."""
    index, placed = 0, []
    for grammar, draft in zip(grammars, drafts):
        advanced, rows = 0, []
        for token in list(draft) + [None]:
            if grammar.is_terminated():
                bitmask[index].fill_(-1)
            else:
                grammar.fill_bitmask(bitmask, index)
            rows.append(index)
            if token is not None and not grammar.is_terminated():
                assert grammar.accept_tokens("req", [token])
                advanced += 1
            index += 1
        if advanced:
            grammar.rollback(advanced)
        placed.append(rows)
    return placed


@pytest.mark.parametrize("k", [0, 1, 4])
def test_decoding_with_and_without_drafts_matches_fresh_sessions(tokenizer, reference, k):
    backend = make_backend(tokenizer, speculative_tokens=k)
    rng = random.Random(k)
    plans = [(kind, spec, reference.tokens(kind, spec, text)) for kind, spec, text in REQUESTS]
    grammars = [backend.compile_grammar(kind, spec) for kind, spec, _ in plans]
    committed = [[] for _ in plans]
    bitmask = backend.allocate_token_bitmask(len(plans) * (1 + k))
    assert bitmask.dtype == torch.int32 and bitmask.shape[1] == (backend.vocab_size + 31) // 32
    for _ in range(200):
        if all(g.is_terminated() for g in grammars):
            break
        drafts = []
        for (kind, spec, tokens), grammar, done in zip(plans, grammars, committed):
            ahead = tokens[len(done):len(done) + k]
            # A draft sometimes goes wrong after a few right tokens: the scheduler trims it.
            if ahead and rng.random() < 0.3:
                bad = rng.randrange(len(ahead))
                ahead = ahead[:bad] + [reference.refused_token(kind, spec, done + ahead[:bad])]
            valid = grammar.validate_tokens(ahead) if not grammar.is_terminated() else []
            assert valid == [t for t, _ in zip(ahead, tokens[len(done):])][:len(valid)]
            drafts.append(valid)
        bitmask.fill_(0)
        placed = step_rows(grammars, drafts, bitmask)
        for (kind, spec, tokens), done, draft, rows in zip(plans, committed, drafts, placed):
            for position, row in enumerate(rows):
                expected = reference.mask(kind, spec, done + draft[:position])
                assert np.array_equal(bitmask[row].numpy(), expected), (kind, len(done), position)
        # The model accepts some drafts and adds one token of its own (the next of the text).
        for (kind, spec, tokens), grammar, done, draft in zip(plans, grammars, committed, drafts):
            if grammar.is_terminated():
                continue
            kept = rng.randint(0, len(draft))
            new = tokens[len(done):len(done) + kept + 1]
            assert grammar.accept_tokens("req", new)
            done.extend(new)
    assert all(g.is_terminated() for g in grammars)
    assert [len(c) for c in committed] == [len(t) for _, _, t in plans]


def test_refused_tokens_leave_the_grammar_as_it_was(tokenizer, reference):
    backend = make_backend(tokenizer, speculative_tokens=4)
    kind, spec, text = REQUESTS[0]
    tokens = reference.tokens(kind, spec, text)
    grammar = backend.compile_grammar(kind, spec)
    assert grammar.accept_tokens("r", tokens[:3])
    bad = reference.refused_token(kind, spec, tokens[:4])
    assert not grammar.accept_tokens("r", [tokens[3], bad])
    assert grammar.validate_tokens([tokens[3], bad, tokens[4]]) == [tokens[3]]
    row = backend.allocate_token_bitmask(1)
    grammar.fill_bitmask(row, 0)
    assert np.array_equal(row[0].numpy(), reference.mask(kind, spec, tokens[:3]))
    # EOS before the value is complete is refused too.
    assert not grammar.accept_tokens("r", [tokenizer.eos_token_id])
    # A rollback past what speculative decoding keeps is an error, not a silent no-op.
    assert grammar.accept_tokens("r", tokens[3:9])
    with pytest.raises(maskforge.RollbackError):
        grammar.rollback(5)
    grammar.rollback(4)
    grammar.fill_bitmask(row, 0)
    assert np.array_equal(row[0].numpy(), reference.mask(kind, spec, tokens[:5]))


def test_terminated_and_reset(tokenizer, reference):
    backend = make_backend(tokenizer)
    kind, spec, text = REQUESTS[3]
    tokens = reference.tokens(kind, spec, text)
    grammar = backend.compile_grammar(kind, spec)
    # Tokens after the stop are ignored, in the same call and after it (vLLM's convention).
    assert grammar.accept_tokens("r", tokens + [tokens[0]])
    assert grammar.is_terminated()
    assert grammar.accept_tokens("r", [tokens[0]]) and grammar.validate_tokens([tokens[0]]) == []
    row = backend.allocate_token_bitmask(1)
    row.fill_(0)
    grammar.fill_bitmask(row, 0)
    assert bool((row == -1).all())
    grammar.reset()
    assert not grammar.is_terminated()
    grammar.fill_bitmask(row, 0)
    assert np.array_equal(row[0].numpy(), reference.mask(kind, spec, []))


def test_request_stop_tokens_end_the_output_where_eos_would(tokenizer, reference):
    backend = make_backend(tokenizer, speculative_tokens=1)
    kind, spec, text = REQUESTS[2]
    tokens = reference.tokens(kind, spec, text)
    eos, stop = tokens[-1], tokenizer.convert_tokens_to_ids("ĊĊ")  # "\n\n" as a user stop token
    grammar = backend.compile_grammar(kind, spec, stop_token_ids={stop})
    row = backend.allocate_token_bitmask(1)

    def bit(token):
        return bool(int(row[0, token // 32]) >> (token % 32) & 1)

    for position, token in enumerate(tokens[:-1]):
        grammar.fill_bitmask(row, 0)
        expected = reference.mask(kind, spec, tokens[:position])
        can_end = bool(expected[eos // 32] >> (eos % 32) & 1)
        assert (bit(stop), bit(eos)) == (can_end, False), position
        assert grammar.accept_tokens("r", [token])
    grammar.fill_bitmask(row, 0)
    assert bit(stop) and not bit(eos)
    # EOS is not this request's stop: refused; the stop token ends it.
    assert grammar.validate_tokens([eos]) == [] and not grammar.accept_tokens("r", [eos])
    assert grammar.validate_tokens([stop, tokens[0]]) == [stop]
    assert grammar.accept_tokens("r", [stop]) and grammar.is_terminated()
    grammar.rollback(1)
    assert not grammar.is_terminated()


def test_batched_fill_writes_the_rows_of_per_grammar_fills(tokenizer, reference):
    backend = make_backend(tokenizer)
    grammars = [backend.compile_grammar(kind, spec) for kind, spec, _ in REQUESTS]
    for grammar, (kind, spec, text) in zip(grammars, REQUESTS):
        grammar.accept_tokens("r", reference.tokens(kind, spec, text)[:2])
    rows = [5, 0, 3, 1, 2, 4]
    one, many = backend.allocate_token_bitmask(7), backend.allocate_token_bitmask(7)
    for grammar, row in zip(grammars, rows):
        grammar.fill_bitmask(one, row)
    fill_bitmasks(grammars, many, rows)
    assert torch.equal(one, many)


def test_options_and_refusals(tokenizer):
    compact = make_backend(tokenizer, disable_any_whitespace=True)
    grammar = compact.compile_grammar("json", '{"type": "array"}')
    space = tokenizer.convert_tokens_to_ids("Ġ")
    assert not grammar.session.is_allowed(space)
    assert make_backend(tokenizer).compile_grammar("json", '{"type": "array"}').session.is_allowed(space)
    with pytest.raises(maskforge.UnsupportedConstraintError) as caught:
        compact.compile_grammar("grammar", 'root ::= "a"')
    assert caught.value.kind == "grammar"
    with pytest.raises(maskforge.SchemaError):
        compact.compile_grammar("json", '{"type": "strin"}')
    with pytest.raises(maskforge.UnsupportedConstraintError):
        compact.compile_grammar("structural_tag", '{"type": "structural_tag", "format": {"type": "grammar", "grammar": "x"}}')
    # Bound programs are kept per request spec: the same schema twice binds once.
    assert compact.programs.bound("json", '{"type": "array"}') is compact.programs.bound("json", '{"type": "array"}')

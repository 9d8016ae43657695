"""MaskForge inside the real SGLang package (opt-in: needs SGLang, installed into a virtualenv
of its own by ``bash integration/engines_venv.sh sglang``; skipped elsewhere). No GPU: SGLang's
own registry, server arguments, backend factory and grammar cache build MaskForge's backend
for the vendored stories260K tokenizer; its batched fill and the masks it applies to logits
are compared bit for bit with fresh MaskForge sessions.

    .venv-sglang/bin/python -m pytest tests/engines/test_sglang_package.py
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
pytest.importorskip("sglang")

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from engine_replay import REQUESTS, Reference  # noqa: E402

import torch  # noqa: E402
import transformers  # noqa: E402
from sglang.srt import runtime_context  # noqa: E402
from sglang.srt.constrained import base_grammar_backend as base  # noqa: E402
from sglang.srt.server_args import ServerArgs  # noqa: E402

import maskforge  # noqa: E402
from maskforge.integrations import sglang as adapter  # noqa: E402

MODEL = Path(__file__).resolve().parent.parent / "data" / "models" / "stories260K"


@pytest.fixture(scope="module")
def backend():
    adapter.register()
    args = ServerArgs(model_path=str(MODEL), grammar_backend="maskforge", device="cpu")
    runtime_context.publish(args, role="scheduler")
    tokenizer = transformers.AutoTokenizer.from_pretrained(str(MODEL))
    made = base.create_grammar_backend(args, tokenizer, 512, {tokenizer.eos_token_id})
    assert isinstance(made, adapter.MaskForgeGrammarBackend)
    return made


def test_the_adapters_subclass_sglangs_classes_and_the_cli_takes_the_name():
    assert issubclass(adapter.MaskForgeGrammar, base.BaseGrammarObject)
    assert issubclass(adapter.MaskForgeGrammarBackend, base.BaseGrammarBackend)
    adapter.register()
    from sglang.srt.arg_groups.choices import GRAMMAR_BACKEND_CHOICES

    assert "maskforge" in GRAMMAR_BACKEND_CHOICES


KEYS = {"json": "json", "regex": "regex", "structural_tag": "structural_tag"}


def test_cached_grammars_fill_batches_and_mask_logits_as_fresh_sessions(backend):
    reference = Reference(backend.vocabulary, backend.compiler)
    cases = [(k, s, t) for k, s, t in REQUESTS if k in KEYS]
    grammars, plans = [], []
    for kind, spec, text in cases:
        future, hit = backend.get_cached_or_future_value((KEYS[kind], spec), False)
        assert not hit
        compiled = future.result()
        backend.set_cache((KEYS[kind], spec), compiled)
        again, hit = backend.get_cached_or_future_value((KEYS[kind], spec), False)
        assert hit and isinstance(again, adapter.MaskForgeGrammar)
        grammars.append(again)
        plans.append((kind, spec, reference.tokens(kind, spec, text)))
    done = [[] for _ in plans]
    vocab = backend.vocab_size
    while not all(g.is_terminated() for g in grammars):
        mask = grammars[0].allocate_vocab_mask(vocab, len(grammars), "cpu")
        rows = [base.GrammarRow(row=i, grammar=g) for i, g in enumerate(grammars)]
        adapter.MaskForgeGrammar.fill_vocab_mask_batched(rows[::-1], mask)
        logits = torch.zeros(len(grammars), vocab)
        adapter.MaskForgeGrammar.apply_vocab_mask(logits, adapter.MaskForgeGrammar.move_vocab_mask(mask, "cpu"))
        for i, ((kind, spec, tokens), grammar) in enumerate(zip(plans, grammars)):
            expected = reference.mask(kind, spec, done[i])
            assert np.array_equal(mask[i].numpy(), expected)
            if not grammar.is_terminated():
                grammar.accept_token(tokens[len(done[i])])
                done[i].append(tokens[len(done[i])])


def test_invalid_requests_are_sglangs_invalid_grammar(backend):
    for key in [("ebnf", 'root ::= "a"'), ("json", '{"type": 7}'), ("regex", "(a")]:
        future, _ = backend.get_cached_or_future_value(key, False)
        value = future.result()
        assert isinstance(value, base.InvalidGrammarObject), key
        assert value.error_message

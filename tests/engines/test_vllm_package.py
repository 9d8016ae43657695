"""MaskForge inside the real vLLM package (opt-in: needs vLLM, installed into a virtualenv of
its own by ``bash integration/engines_venv.sh vllm``; skipped elsewhere). No GPU: vLLM's
``StructuredOutputManager`` runs its own call sequences on the CPU, over the vendored
stories260K model's config and tokenizer, with MaskForge in the ``"guidance"`` slot. Every row
it fills is compared bit for bit with a fresh MaskForge session that replayed the request's
committed and draft tokens.

    .venv-vllm/bin/python -m pytest tests/engines/test_vllm_package.py
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import numpy as np
import pytest

os.environ.setdefault("VLLM_TARGET_DEVICE", "cpu")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
vllm = pytest.importorskip("vllm")

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from engine_replay import REQUESTS, Reference  # noqa: E402

from vllm.config import StructuredOutputsConfig, VllmConfig  # noqa: E402
from vllm.config.model import ModelConfig  # noqa: E402
from vllm.config.speculative import SpeculativeConfig  # noqa: E402
from vllm.sampling_params import SamplingParams, StructuredOutputsParams  # noqa: E402
from vllm.v1.request import Request  # noqa: E402
from vllm.v1.structured_output import StructuredOutputManager  # noqa: E402
from vllm.v1.structured_output.backend_types import StructuredOutputBackend, StructuredOutputGrammar  # noqa: E402

from maskforge.integrations import vllm as adapter  # noqa: E402

MODEL = Path(__file__).resolve().parent.parent / "data" / "models" / "stories260K"
K = 3


def test_the_adapters_satisfy_vllms_abstract_classes():
    assert issubclass(adapter.MaskForgeBackend, StructuredOutputBackend)
    assert issubclass(adapter.MaskForgeGrammar, StructuredOutputGrammar)
    assert not adapter.MaskForgeBackend.__abstractmethods__ and not adapter.MaskForgeGrammar.__abstractmethods__


def params(kind, spec):
    if kind == "json":
        return StructuredOutputsParams(json=spec)
    if kind == "json_object":
        return StructuredOutputsParams(json_object=True)
    if kind == "regex":
        return StructuredOutputsParams(regex=spec)
    if kind == "choice":
        return StructuredOutputsParams(choice=json.loads(spec))
    return StructuredOutputsParams(structural_tag=spec)


@pytest.fixture(scope="module")
def manager():
    adapter.install()
    model = ModelConfig(model=str(MODEL))
    config = VllmConfig(
        model_config=model,
        structured_outputs_config=StructuredOutputsConfig(backend="guidance"),
        speculative_config=SpeculativeConfig(method="ngram", num_speculative_tokens=K, prompt_lookup_max=3, prompt_lookup_min=1),
    )
    return StructuredOutputManager(config), config


def test_the_manager_drives_maskforge_through_speculative_decoding(manager):
    mgr, config = manager
    requests, plans = {}, {}
    for i, (kind, spec, text) in enumerate(REQUESTS):
        sp = SamplingParams(structured_outputs=params(kind, spec), max_tokens=200)
        sp.verify(config.model_config, config.speculative_config, config.structured_outputs_config, mgr.tokenizer)
        sp.update_from_generation_config({}, mgr.tokenizer.eos_token_id)
        request = Request(f"r{i}", prompt_token_ids=[1], sampling_params=sp, pooling_params=None)
        mgr.grammar_init(request)
        requests[request.request_id] = request
        plans[request.request_id] = (kind, spec, text)
    deadline = time.time() + 60
    while not all(r.structured_output_request.is_grammar_ready for r in requests.values()):
        assert time.time() < deadline
        time.sleep(0.01)
    backend = mgr.backend
    assert isinstance(backend, adapter.MaskForgeBackend) and backend.max_rollback_tokens == K
    reference = Reference(backend.vocabulary, backend.compiler)
    tokens = {rid: reference.tokens(*plans[rid][:2], plans[rid][2]) for rid in requests}
    done = {rid: [] for rid in requests}
    order = list(requests)
    for step in range(400):
        live = [rid for rid in order if not requests[rid].structured_output_request.grammar.is_terminated()]
        if not live:
            break
        drafts = {}
        for rid in live:
            ahead = tokens[rid][len(done[rid]):len(done[rid]) + K]
            if step % 3 == 2 and ahead:  # a wrong draft token: validation trims it
                ahead = ahead[:-1] + [reference.refused_token(*plans[rid][:2], done[rid] + ahead[:-1])]
            drafts[rid] = mgr.validate_tokens(requests[rid], ahead) if hasattr(mgr, "validate_tokens") else ahead
        bitmask = mgr.grammar_bitmask(requests, live, drafts)
        for position, rid in enumerate(live):
            for j in range(len(drafts[rid]) + 1):
                row = bitmask[position * (K + 1) + j]
                expected = reference.mask(*plans[rid][:2], done[rid] + drafts[rid][:j])
                assert np.array_equal(row, expected), (plans[rid][0], len(done[rid]), j)
        for rid in live:
            kept = step % (len(drafts[rid]) + 1)
            new = tokens[rid][len(done[rid]):len(done[rid]) + kept + 1]
            assert mgr.accept_tokens(requests[rid], new)
            done[rid].extend(new)
    assert all(requests[rid].structured_output_request.grammar.is_terminated() for rid in order)

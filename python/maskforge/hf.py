"""The transformers integration: a model and tokenizer prepared once for constrained decoding.

``from_transformers(model, tokenizer)`` checks that the pair can be masked exactly (a
decoder-only model with a language-model head on the CPU, a fast tokenizer with an EOS token),
builds the vocabulary from the tokenizer's own ``tokenizer.json`` with one mask bit per logit
column, and keeps compilers per generation policy so that every schema is compiled once.

Neither object is ever changed (no padding side, pad token or config is set), so one
:class:`TransformersModel` serves concurrent requests from several threads.
"""

from __future__ import annotations

import threading
from typing import Any, Dict, List, Optional, Sequence, Tuple

from ._native import BoundSchema, Compiler, Vocabulary
from .errors import InvalidArgumentError, UnsupportedGenerationModeError
from .targets import Target, resolve_target

__all__ = ["TransformersModel", "from_transformers", "LogitsProcessor"]

# (max_json_whitespace, format_assertion, property_order): the policies a compiler is built with.
CompilerKey = Tuple[Optional[int], bool, str]


class TransformersModel:
    """A transformers causal LM and its tokenizer, with the compiled vocabulary they share.

    Build it with :func:`from_transformers`. Attributes: ``model``, ``tokenizer``,
    ``vocabulary`` (a :class:`maskforge.Vocabulary` as wide as the model's logits),
    ``eos_token_ids`` and ``pad_token_id`` (the id finished and padded rows are filled with).
    """

    def __init__(self, model: Any, tokenizer: Any, vocabulary: Vocabulary, pad_token_id: int) -> None:
        self.model = model
        self.tokenizer = tokenizer
        self.vocabulary = vocabulary
        self.eos_token_ids: Tuple[int, ...] = vocabulary.eos_token_ids
        self.pad_token_id = pad_token_id
        self._compilers: Dict[CompilerKey, Compiler] = {}
        self._lock = threading.Lock()

    def bind(self, target: Any, *, max_json_whitespace: Optional[int] = None, format_assertion: bool = True,
             property_order: str = "any", registry: Any = None) -> BoundSchema:
        """Compiles and binds ``target`` under the given policies and ``registry`` (the
        documents external ``$ref``s resolve to: a mapping or a callable, as for
        :class:`maskforge.Compiler`). Compilers, and so compiled executables, are kept per policy
        value; a bind with a registry gets a compiler of its own (registries are not kept, so a
        server passing a new one per request holds nothing after it)."""
        target = resolve_target(target)
        options = {"max_json_whitespace": max_json_whitespace, "format_assertion": format_assertion,
                   "property_order": property_order}
        if registry is not None:
            compiler = Compiler(registry=registry, **options)
        else:
            key: CompilerKey = (max_json_whitespace, format_assertion, property_order)
            with self._lock:
                compiler = self._compilers.get(key)
                if compiler is None:
                    compiler = self._compilers[key] = Compiler(**options)
        # Compiler caches are thread-safe; the compile and the bind run outside the lock.
        return compiler.compile(target.schema_json).bind(self.vocabulary)

    def encode(self, prompt: str) -> List[int]:
        """The prompt's token ids, as the tokenizer encodes it alone (special tokens included)."""
        return list(self.tokenizer(prompt)["input_ids"])

    def token_text(self, token_ids: Sequence[int]) -> bytes:
        """The exact bytes the tokens generate (EOS and special tokens generate none)."""
        return b"".join(self.vocabulary.token_bytes(t) or b"" for t in token_ids)

    def __repr__(self) -> str:
        return (f"TransformersModel({type(self.model).__name__}, {type(self.tokenizer).__name__}, "
                f"mask_vocab_size={self.vocabulary.mask_vocab_size}, eos_token_ids={self.eos_token_ids})")


def from_transformers(model: Any, tokenizer: Any) -> TransformersModel:
    """Prepares a transformers causal LM and its fast tokenizer for constrained generation.

    Raises ``UnsupportedGenerationModeError`` for encoder-decoder models and models that are not
    on the CPU, ``InvalidArgumentError`` for a model without a language-model head, a slow
    tokenizer or a tokenizer without an EOS token.
    """
    import torch

    if not isinstance(model, torch.nn.Module) or not hasattr(model, "config"):
        raise InvalidArgumentError(f"model must be a transformers PreTrainedModel, got {type(model).__name__}")
    if getattr(model.config, "is_encoder_decoder", False):
        raise UnsupportedGenerationModeError(
            f"{type(model).__name__} is an encoder-decoder model; maskforge generates with decoder-only models"
        )
    head = model.get_output_embeddings() if hasattr(model, "get_output_embeddings") else None
    if head is None:
        raise InvalidArgumentError(
            f"{type(model).__name__} has no language-model head: load it with AutoModelForCausalLM"
        )
    devices = {parameter.device.type for parameter in model.parameters()}
    if devices != {"cpu"}:
        raise UnsupportedGenerationModeError(
            f"the model is on {', '.join(sorted(devices))}: the transformers integration runs on the CPU"
        )
    if not getattr(tokenizer, "is_fast", False) or not hasattr(tokenizer, "backend_tokenizer"):
        raise InvalidArgumentError(
            f"{type(tokenizer).__name__} is not a fast tokenizer: load it with AutoTokenizer(..., use_fast=True) "
            "so that its token bytes can be read exactly"
        )
    eos = _eos_token_ids(model, tokenizer)
    if not eos:
        raise InvalidArgumentError("the tokenizer has no EOS token (eos_token_id), so generation could never end")
    logit_width = int(head.weight.shape[0])
    vocabulary = Vocabulary.from_tokenizer_json_str(
        tokenizer.backend_tokenizer.to_str(), mask_vocab_size=logit_width, eos_token_id=eos
    )
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else eos[0]
    return TransformersModel(model, tokenizer, vocabulary, int(pad))


def _eos_token_ids(model: Any, tokenizer: Any) -> List[int]:
    ids: List[int] = []
    candidates = [tokenizer.eos_token_id]
    generation_config = getattr(model, "generation_config", None)
    if generation_config is not None:
        configured = generation_config.eos_token_id
        candidates += configured if isinstance(configured, (list, tuple)) else [configured]
    for candidate in candidates:
        if candidate is not None and int(candidate) not in ids:
            ids.append(int(candidate))
    return ids


class LogitsProcessor:
    """A transformers logits processor that masks ``model.generate`` to a schema or type.

    ``LogitsProcessor(adapter, target, max_json_whitespace=..., format_assertion=...,
    property_order=..., registry=...)``; pass it in ``logits_processor=[...]``. It keeps one session per batch
    row and requires every call to extend each row of the previous call by exactly one token
    (greedy search and sampling); beam search, assisted or speculative decoding reorder or
    rewind rows and raise ``UnsupportedGenerationModeError``. Use one processor per
    ``generate`` call, or call :meth:`reset` between calls.
    """

    def __init__(self, adapter: TransformersModel, target: Any, **policies: Any) -> None:
        if not isinstance(adapter, TransformersModel):
            raise InvalidArgumentError("the first argument must come from maskforge.from_transformers(model, tokenizer)")
        self.adapter = adapter
        self.target: Target = resolve_target(target)
        self.bound = adapter.bind(self.target, **policies)
        self.reset()

    def reset(self) -> None:
        """Forgets the rows of the previous ``generate`` call."""
        self._sessions: Optional[list] = None
        self._previous: Any = None
        self._masks: Any = None

    @property
    def sessions(self) -> list:
        """The session of each batch row (empty before the first call)."""
        return list(self._sessions or [])

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        import torch

        from .tensors import apply_token_bitmask_inplace, fill_masks

        if scores.device.type != "cpu":
            raise UnsupportedGenerationModeError(f"scores on {scores.device}: the logits processor runs on the CPU")
        batch, length = input_ids.shape
        if self._sessions is None:
            self._sessions = [self.bound.start_session() for _ in range(batch)]
            self._masks = torch.empty((batch, self.bound.mask_word_count), dtype=torch.int32)
        else:
            previous = self._previous
            if batch != previous.shape[0] or length != previous.shape[1] + 1 or \
                    not torch.equal(input_ids[:, :-1], previous):
                raise UnsupportedGenerationModeError(
                    "each call must extend every row of the previous one by exactly one token (greedy search or "
                    "sampling); beam search and assisted or speculative decoding are not supported. Use a new "
                    "LogitsProcessor (or reset()) for each generate call."
                )
            for session, token in zip(self._sessions, input_ids[:, -1].tolist()):
                # A finished row is extended with padding by `generate`; its session stays finished.
                if not session.is_finished():
                    session.advance(token)
        self._previous = input_ids.detach().clone()
        fill_masks(self._sessions, self._masks)
        apply_token_bitmask_inplace(scores, self._masks)
        return scores

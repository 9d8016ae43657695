"""``Generator``: schema- or type-constrained generation with a transformers model.

The schema is compiled and bound once per distinct policy value. Each call encodes its prompts
one by one, left-pads them into a local batch with a matching attention mask and position ids,
and decodes with the model's key/value cache: at every step each row's session writes its mask
(all rows at once, with the GIL released), disallowed logits become ``-inf``, a token is chosen
(greedy, or sampled with one random generator per row so that a batch is reproducible), and
every unfinished session advances. Finished rows are fed EOS. Nothing the caller passed in is
modified, so one adapter serves several threads.
"""

from __future__ import annotations

import inspect
import threading
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Union

from ._native import BoundSchema
from .errors import (
    ArgumentTypeError,
    GenerationTruncatedError,
    InvalidArgumentError,
    UnsupportedGenerationModeError,
)
from .hf import LogitsProcessor, TransformersModel
from .targets import Target, resolve_target

__all__ = ["Generator", "SamplingOptions"]

_DEFAULT_MAX_NEW_TOKENS = 256
_UNSET: Any = object()

# Contrastive search now lives in a Hub `custom_generate` repository, which cannot load offline.
_REJECTED_MODES = {
    "penalty_alpha": lambda value: value is not None and value > 0,
}


@dataclass(frozen=True)
class SamplingOptions:
    """How tokens are chosen among the allowed ones. Greedy unless ``do_sample``.

    With ``seed``, row ``i`` of a batch draws from its own generator seeded ``seed + i``, so the
    same call gives the same values whatever the other rows do. ``num_beams``,
    ``num_return_sequences``, ``assistant_model`` and ``prompt_lookup_num_tokens`` hand the
    decoding to ``model.generate`` with a :class:`maskforge.LogitsProcessor`; ``seed`` then
    seeds the whole call.
    """

    do_sample: bool = False
    temperature: float = 1.0
    top_k: int = 0
    top_p: float = 1.0
    seed: Optional[int] = None
    num_beams: int = 1
    num_return_sequences: int = 1
    assistant_model: Any = None
    prompt_lookup_num_tokens: Optional[int] = None

    @classmethod
    def from_kwargs(cls, kwargs: Dict[str, Any]) -> "SamplingOptions":
        for name, rejected in _REJECTED_MODES.items():
            if name in kwargs and rejected(kwargs[name]):
                raise UnsupportedGenerationModeError(
                    f"{name}={kwargs[name]!r} (contrastive search) is not supported: transformers serves it from a "
                    "Hub repository (custom_generate) that cannot be loaded offline"
                )
        known = {"do_sample", "temperature", "top_k", "top_p", "seed", "num_beams", "num_return_sequences",
                 "assistant_model", "prompt_lookup_num_tokens"}
        unknown = sorted(set(kwargs) - known - set(_REJECTED_MODES))
        if unknown:
            raise InvalidArgumentError(
                f"unknown generation option(s) {', '.join(unknown)}; supported: {', '.join(sorted(known))}"
            )
        options = cls(**{name: kwargs[name] for name in known if name in kwargs and kwargs[name] is not None})
        options._check()
        return options

    @property
    def uses_generate(self) -> bool:
        """Whether ``model.generate`` decodes (beams, several sequences a prompt, or drafts)."""
        return (self.num_beams > 1 or self.num_return_sequences > 1 or self.assistant_model is not None
                or self.prompt_lookup_num_tokens is not None)

    def _check(self) -> None:
        if not isinstance(self.do_sample, bool):
            raise ArgumentTypeError(f"do_sample must be a bool, got {type(self.do_sample).__name__}")
        if not _is_number(self.temperature) or not self.temperature > 0:
            raise InvalidArgumentError(f"temperature must be a positive number, got {self.temperature!r}")
        if not _is_int(self.top_k) or self.top_k < 0:
            raise InvalidArgumentError(f"top_k must be a non-negative int (0: off), got {self.top_k!r}")
        if not _is_number(self.top_p) or not 0 < self.top_p <= 1:
            raise InvalidArgumentError(f"top_p must be in (0, 1], got {self.top_p!r}")
        if self.seed is not None and not _is_int(self.seed):
            raise ArgumentTypeError(f"seed must be an int, got {type(self.seed).__name__}")
        for name in ("num_beams", "num_return_sequences"):
            value = getattr(self, name)
            if not _is_int(value) or value < 1:
                raise InvalidArgumentError(f"{name} must be a positive int, got {value!r}")
        if not self.do_sample and self.num_return_sequences > self.num_beams:
            raise InvalidArgumentError(
                f"num_return_sequences={self.num_return_sequences} needs as many beams (num_beams) or do_sample=True: "
                "greedy search has one sequence a prompt"
            )
        drafts = self.assistant_model is not None or self.prompt_lookup_num_tokens is not None
        if self.assistant_model is not None and self.prompt_lookup_num_tokens is not None:
            raise InvalidArgumentError("give assistant_model or prompt_lookup_num_tokens, not both")
        if self.assistant_model is not None and not callable(getattr(self.assistant_model, "generate", None)):
            raise ArgumentTypeError(
                f"assistant_model must be a transformers model, got {type(self.assistant_model).__name__}"
            )
        if self.prompt_lookup_num_tokens is not None and (not _is_int(self.prompt_lookup_num_tokens)
                                                          or self.prompt_lookup_num_tokens < 1):
            raise InvalidArgumentError(
                f"prompt_lookup_num_tokens must be a positive int, got {self.prompt_lookup_num_tokens!r}"
            )
        if drafts and (self.num_beams > 1 or self.num_return_sequences > 1):
            raise InvalidArgumentError("assisted and prompt-lookup decoding run with one beam and one sequence a prompt")


class Generator:
    """Generates values of ``target`` with a model prepared by :func:`maskforge.from_transformers`.

    ``target`` is a Pydantic ``BaseModel``, dataclass, ``TypedDict``, ``Enum``, ``Literal``,
    union or ``list[T]`` (values come back as that type) or a JSON Schema as text or dict (values
    come back as JSON values). The policies (``max_json_whitespace``, ``format_assertion``,
    ``property_order``) and ``registry`` (documents for external ``$ref``s) are the compiler's;
    ``max_json_whitespace`` can also be given per call.

    ``generator(prompt, max_new_tokens=..., **generation_kwargs)`` returns one value;
    ``generator([prompt, ...], ...)`` returns a list. Generation options: ``do_sample``,
    ``temperature``, ``top_k``, ``top_p``, ``seed``. If ``max_new_tokens`` runs out before a
    row's text is a complete instance, ``GenerationTruncatedError`` carries every row's text and
    the values of the rows that completed.
    """

    def __init__(self, adapter: TransformersModel, target: Any, *, max_json_whitespace: Optional[int] = None,
                 format_assertion: bool = True, property_order: str = "any", registry: Any = None,
                 fast_forward: bool = True) -> None:
        if not isinstance(adapter, TransformersModel):
            raise ArgumentTypeError(
                "the first argument must come from maskforge.from_transformers(model, tokenizer), "
                f"got {type(adapter).__name__}"
            )
        self.adapter = adapter
        self.target: Target = resolve_target(target)
        self.max_json_whitespace = max_json_whitespace
        if not isinstance(fast_forward, bool):
            raise ArgumentTypeError(f"fast_forward must be a bool, got {type(fast_forward).__name__}")
        self.fast_forward = fast_forward
        self._last = threading.local()
        self._policies = {"format_assertion": format_assertion, "property_order": property_order,
                          "registry": registry}
        self._bound: Dict[Optional[int], BoundSchema] = {}
        self._lock = threading.Lock()
        self._model_takes = set(inspect.signature(adapter.model.forward).parameters)
        self.bound_schema(max_json_whitespace)  # schema errors surface here, before any generation

    def bound_schema(self, max_json_whitespace: Optional[int] = None) -> BoundSchema:
        """The target bound to the adapter's vocabulary under ``max_json_whitespace`` (cached)."""
        with self._lock:
            bound = self._bound.get(max_json_whitespace)
        if bound is None:
            bound = self.adapter.bind(self.target, max_json_whitespace=max_json_whitespace, **self._policies)
            with self._lock:
                bound = self._bound.setdefault(max_json_whitespace, bound)
        return bound

    def __call__(self, prompt: Union[str, Sequence[str]], *, max_new_tokens: int = _DEFAULT_MAX_NEW_TOKENS,
                 max_json_whitespace: Optional[int] = _UNSET, fast_forward: Optional[bool] = None,
                 **generation_kwargs: Any) -> Any:
        prompts = _prompts(prompt)
        if fast_forward is None:
            fast_forward = self.fast_forward
        elif not isinstance(fast_forward, bool):
            raise ArgumentTypeError(f"fast_forward must be a bool, got {type(fast_forward).__name__}")
        if isinstance(max_new_tokens, bool) or not isinstance(max_new_tokens, int):
            raise ArgumentTypeError(f"max_new_tokens must be an int, got {type(max_new_tokens).__name__}")
        if max_new_tokens <= 0:
            raise InvalidArgumentError(f"max_new_tokens must be positive, got {max_new_tokens}")
        sampling = SamplingOptions.from_kwargs(generation_kwargs)
        if max_json_whitespace is _UNSET:
            max_json_whitespace = self.max_json_whitespace
        bound = self.bound_schema(max_json_whitespace)
        if sampling.uses_generate:
            rows, stats = _decode_with_generate(self.adapter, bound, prompts, max_new_tokens, sampling)
        else:
            rows, stats = _decode(self.adapter, bound, prompts, max_new_tokens, sampling, self._model_takes,
                                  fast_forward)
        self._last.stats = stats
        values = self._results(rows)
        per_prompt = sampling.num_return_sequences
        if per_prompt > 1:
            values = [values[i:i + per_prompt] for i in range(0, len(values), per_prompt)]
        return values if not isinstance(prompt, str) else values[0]

    generate = __call__

    @property
    def last_stats(self) -> Optional["GenerationStats"]:
        """The cost of this thread's last call (forward passes, tokens fast-forwarded), or
        ``None`` before any call; also set when the call raised ``GenerationTruncatedError``."""
        return getattr(self._last, "stats", None)

    def _results(self, rows: List["_Row"]) -> List[Any]:
        texts = [self.adapter.token_text(row.tokens).decode("utf-8", errors="replace") for row in rows]
        values: Dict[int, Any] = {}
        truncated = []
        for index, (row, text) in enumerate(zip(rows, texts)):
            if row.session.is_finished() or row.session.is_accepting():
                values[index] = self.target.parse(text)
            else:
                truncated.append(index)
        if truncated:
            endings = "; ".join(f"row {i} ends {texts[i][-40:]!r}" for i in truncated[:3])
            raise GenerationTruncatedError(
                f"max_new_tokens ran out before row(s) {', '.join(map(str, truncated))} of {len(rows)} completed "
                f"an instance ({endings}); raise max_new_tokens, or cap whitespace with max_json_whitespace",
                texts=texts,
                values=values,
            )
        return [values[index] for index in range(len(rows))]

    def __repr__(self) -> str:
        return f"Generator({self.adapter!r}, {self.target.description})"


@dataclass
class GenerationStats:
    """What a call cost: model forward passes (``None`` where ``model.generate`` decoded),
    tokens appended without a pass of their own (fast-forward), and tokens generated in all."""

    forward_passes: Optional[int] = 0
    forced_tokens: int = 0
    generated_tokens: int = 0  # over all rows, EOS not counted


@dataclass
class _Row:
    session: Any
    tokens: List[int]


def _prompts(prompt: Any) -> List[str]:
    if isinstance(prompt, str):
        return [prompt]
    if isinstance(prompt, (list, tuple)) and all(isinstance(p, str) for p in prompt):
        if not prompt:
            raise InvalidArgumentError("the list of prompts is empty")
        return list(prompt)
    raise ArgumentTypeError(f"prompt must be a str or a list of str, got {type(prompt).__name__}")


def _decode(adapter: TransformersModel, bound: BoundSchema, prompts: List[str], max_new_tokens: int,
            sampling: SamplingOptions, model_takes: set, fast_forward: bool) -> "tuple[List[_Row], GenerationStats]":
    import torch

    from .tensors import apply_token_bitmask_inplace, fill_masks

    input_ids, attention_mask = _left_padded(adapter, prompts)
    batch = input_ids.shape[0]
    rows = [_Row(bound.start_session(), []) for _ in range(batch)]
    sessions = [row.session for row in rows]
    stats = GenerationStats()
    if fast_forward:
        # Every row starts in the same state: what the schema forces first joins the prompt.
        forced = adapter.forced_tokens(sessions[0], [])[:max_new_tokens]
        for row in rows:
            row.session.advance_many(forced)
            row.tokens.extend(forced)
        stats.forced_tokens += len(forced) * batch
        if forced:
            input_ids = torch.cat([input_ids, torch.tensor([forced] * batch, dtype=torch.long)], dim=-1)
            attention_mask = torch.cat([attention_mask, torch.ones((batch, len(forced)), dtype=torch.long)], dim=-1)
    position_ids = (attention_mask.cumsum(-1) - 1).clamp(min=0)

    masks = torch.empty((batch, bound.mask_word_count), dtype=torch.int32)
    generators = _row_generators(sampling, batch)
    eos = adapter.eos_token_ids[0]
    model = adapter.model
    # The key/value cache: `cache` in recent transformers, `past_key_values` before.
    cache_argument = "cache" if "cache" in model_takes else "past_key_values"
    past = None
    step_input = input_ids

    def done(row: _Row) -> bool:
        return row.session.is_finished() or len(row.tokens) >= max_new_tokens

    with torch.inference_mode():
        while not all(done(row) for row in rows):
            inputs: Dict[str, Any] = {"input_ids": step_input, "attention_mask": attention_mask, "use_cache": True}
            if past is not None:
                inputs[cache_argument] = past
            if "position_ids" in model_takes:
                inputs["position_ids"] = position_ids[:, -step_input.shape[1]:]
            if "logits_to_keep" in model_takes:
                inputs["logits_to_keep"] = 1
            output = model(**inputs)
            stats.forward_passes += 1
            past = output[cache_argument]
            logits = output["logits"][:, -1, :].float()
            fill_masks(sessions, masks)
            apply_token_bitmask_inplace(logits, masks)
            chosen = _choose(logits, sampling, generators)
            pending: List[List[int]] = []
            for row, token in zip(rows, chosen):
                if done(row):
                    pending.append([eos])
                    continue
                row.session.advance(token)
                if row.session.is_finished():
                    pending.append([eos])
                    continue
                row.tokens.append(token)
                step = [token]
                if fast_forward and len(row.tokens) < max_new_tokens:
                    forced = adapter.forced_tokens(row.session, row.tokens)[:max_new_tokens - len(row.tokens)]
                    if forced:
                        row.session.advance_many(forced)
                        row.tokens.extend(forced)
                        step.extend(forced)
                        stats.forced_tokens += len(forced)
                pending.append(step)
            if all(done(row) for row in rows):
                break
            # Rows feed their chosen and forced tokens in one pass, left-padded to one width; the
            # padding is masked out of attention and keeps no position.
            width = max(len(step) for step in pending)
            step_input = torch.full((batch, width), adapter.pad_token_id, dtype=torch.long)
            step_mask = torch.zeros((batch, width), dtype=torch.long)
            step_positions = position_ids[:, -1:].repeat(1, width) + 1
            for index, step in enumerate(pending):
                step_input[index, width - len(step):] = torch.tensor(step, dtype=torch.long)
                step_mask[index, width - len(step):] = 1
                step_positions[index] = (position_ids[index, -1] + step_mask[index].cumsum(-1)).clamp(
                    min=int(position_ids[index, -1]) + 1)
            attention_mask = torch.cat([attention_mask, step_mask], dim=-1)
            position_ids = torch.cat([position_ids, step_positions], dim=-1)
    stats.generated_tokens = sum(len(row.tokens) for row in rows)
    return rows, stats


def _left_padded(adapter: TransformersModel, prompts: List[str]) -> Any:
    """The prompts' token ids left-padded into one batch, and the attention mask over them."""
    import torch

    encoded = [adapter.encode(prompt) for prompt in prompts]
    batch, width = len(encoded), max(len(ids) for ids in encoded)
    if width == 0:
        raise InvalidArgumentError("a prompt encodes to no tokens; give the model at least one token to start from")
    input_ids = torch.full((batch, width), adapter.pad_token_id, dtype=torch.long)
    attention_mask = torch.zeros((batch, width), dtype=torch.long)
    for row, ids in enumerate(encoded):
        if ids:
            input_ids[row, width - len(ids):] = torch.tensor(ids, dtype=torch.long)
            attention_mask[row, width - len(ids):] = 1
    return input_ids, attention_mask


def _decode_with_generate(adapter: TransformersModel, bound: BoundSchema, prompts: List[str], max_new_tokens: int,
                          sampling: SamplingOptions) -> List[_Row]:
    """Beams, several sequences a prompt, or drafted tokens: ``model.generate`` decodes, masked by a
    :class:`LogitsProcessor`; each returned sequence is replayed into a fresh session, which says
    whether it completed. Rows come prompt by prompt, ``num_return_sequences`` each, best first."""
    import torch

    options: Dict[str, Any] = {"max_new_tokens": max_new_tokens, "pad_token_id": adapter.pad_token_id,
                               "eos_token_id": list(adapter.eos_token_ids), "do_sample": sampling.do_sample,
                               "num_beams": sampling.num_beams,
                               "num_return_sequences": sampling.num_return_sequences}
    if sampling.do_sample:
        options.update(temperature=sampling.temperature, top_k=sampling.top_k, top_p=sampling.top_p)
    if sampling.assistant_model is not None:
        options["assistant_model"] = sampling.assistant_model
    if sampling.prompt_lookup_num_tokens is not None:
        options["prompt_lookup_num_tokens"] = sampling.prompt_lookup_num_tokens
    # transformers drafts for one row at a time: a batch of prompts is decoded prompt by prompt.
    drafts = sampling.assistant_model is not None or sampling.prompt_lookup_num_tokens is not None
    groups = [[prompt] for prompt in prompts] if drafts else [prompts]
    processor = LogitsProcessor.over(adapter, bound)
    rows: List[_Row] = []
    stats = GenerationStats(forward_passes=None)  # model.generate does not report its passes
    with torch.inference_mode(), torch.random.fork_rng(devices=[]):
        if sampling.seed is not None:
            torch.manual_seed(sampling.seed)
        for group in groups:
            input_ids, attention_mask = _left_padded(adapter, group)
            output = adapter.model.generate(input_ids=input_ids, attention_mask=attention_mask,
                                            logits_processor=[processor], **options)
            for sequence in output[:, input_ids.shape[1]:].tolist():
                session = bound.start_session()
                tokens: List[int] = []
                for token in sequence:
                    session.advance(token)
                    if session.is_finished():
                        break
                    tokens.append(token)
                rows.append(_Row(session, tokens))
            processor.reset()
    stats.generated_tokens = sum(len(row.tokens) for row in rows)
    return rows, stats


def _row_generators(sampling: SamplingOptions, batch: int) -> Optional[List[Any]]:
    import torch

    if not sampling.do_sample or sampling.seed is None:
        return None
    return [torch.Generator().manual_seed(sampling.seed + row) for row in range(batch)]


def _choose(logits: Any, sampling: SamplingOptions, generators: Optional[List[Any]]) -> List[int]:
    """One token per row among the allowed (finite) logits."""
    import torch

    if not sampling.do_sample:
        return logits.argmax(dim=-1).tolist()
    logits = logits / sampling.temperature
    if sampling.top_k > 0:
        k = min(sampling.top_k, logits.shape[-1])
        kth = torch.topk(logits, k, dim=-1).values[:, -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    if sampling.top_p < 1:
        ordered, order = torch.sort(logits, descending=True, dim=-1)
        cumulative = ordered.softmax(dim=-1).cumsum(dim=-1)
        # Drop a token when the tokens ranked above it already reach top_p; the first always stays.
        drop = (cumulative - ordered.softmax(dim=-1)) >= sampling.top_p
        logits = logits.scatter(-1, order, ordered.masked_fill(drop, float("-inf")))
    probabilities = logits.softmax(dim=-1)
    if generators is None:
        return torch.multinomial(probabilities, 1).squeeze(-1).tolist()
    return [int(torch.multinomial(probabilities[row], 1, generator=generator))
            for row, generator in enumerate(generators)]


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)

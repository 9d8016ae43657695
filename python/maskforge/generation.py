"""``Generator``: schema- or type-constrained generation with a transformers model.

The schema is compiled and bound once per distinct policy value. Each call encodes its prompts
one by one, left-pads them into a local batch with a matching attention mask and position ids,
and decodes with the model's key/value cache: at every step each row's session writes its mask
(all rows at once, with the GIL released), disallowed logits become ``-inf``, a token is chosen
(greedy, or sampled with one random generator per row so that a batch is reproducible), and
every unfinished session advances. A row ends when EOS is chosen or its value is done (nothing
but whitespace could follow); finished rows are fed EOS. Nothing the caller passed in is
modified, so one adapter serves several threads.
"""

from __future__ import annotations

import codecs
import inspect
import sys
import threading
from dataclasses import dataclass
from typing import Any, Dict, Iterable, Iterator, List, Mapping, Optional, Sequence, Union

from ._native import BoundSchema
from .errors import (
    ArgumentTypeError,
    GenerationTruncatedError,
    InvalidArgumentError,
    MaskForgeError,
    UnsupportedGenerationModeError,
)
from .hf import DEFAULT_MAX_JSON_WHITESPACE, LogitsProcessor, TransformersModel
from .targets import Target, resolve_target

__all__ = ["Generator", "SamplingOptions", "Stream", "MapResult", "GenerationStats", "SCHEMA_INSTRUCTION",
           "DEFAULT_MAX_JSON_WHITESPACE"]

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


Prompt = Union[str, Sequence[Mapping[str, Any]]]

# The text `schema_in_prompt` adds: to the system message of a chat prompt (a system message is
# inserted when there is none), or before a plain prompt.
SCHEMA_INSTRUCTION = "Answer with a JSON value that matches this JSON Schema:\n{schema}"


class Generator:
    """Generates values of ``target`` with a model prepared by :func:`maskforge.from_transformers`.

    ``target`` is a Pydantic ``BaseModel``, dataclass, ``TypedDict``, ``Enum``, ``Literal``,
    union or ``list[T]`` (values come back as that type; its objects take the fields it
    declares and no others, unless it keeps extra fields) or a JSON Schema as text or dict
    (values come back as JSON values; the schema is followed as written, or with
    ``closed_objects=True`` objects that leave extra keys unspecified take none). The policies
    (``max_json_whitespace``, ``format_assertion``, ``property_order``, ``closed_objects``) and
    ``registry`` (documents for external ``$ref``s) are the compiler's; ``max_json_whitespace``
    can also be given per call. It defaults to :data:`DEFAULT_MAX_JSON_WHITESPACE` (2) here, not
    to the compiler's unbounded ``None``: small models can spend any budget on whitespace, which
    changes no value; pass ``None`` to lift the cap.

    A prompt is a string, or a chat: a list of ``{"role", "content"}`` dicts, rendered by the
    tokenizer's chat template with the generation prompt. ``generator(prompt, ...)`` returns one
    value; ``generator([prompt, ...], ...)`` returns a list. With ``schema_in_prompt=True`` the
    schema is added to the prompt (:data:`SCHEMA_INSTRUCTION`). Generation options:
    ``do_sample``, ``temperature``, ``top_k``, ``top_p``, ``seed``, ``num_beams``,
    ``num_return_sequences``, ``assistant_model``, ``prompt_lookup_num_tokens``.

    A row ends when EOS is chosen or when its value is done (only whitespace could follow), and
    its first token starts the value (tokens of whitespace alone are not offered before it):
    neither changes which values can come out. If ``max_new_tokens`` runs out before a row's
    text is a complete instance, ``GenerationTruncatedError`` carries every row's text and the
    values of the rows that completed. :meth:`stream` yields text as it is chosen; :meth:`map`
    runs a long list of prompts in batches.
    """

    def __init__(self, adapter: TransformersModel, target: Any, *,
                 max_json_whitespace: Optional[int] = DEFAULT_MAX_JSON_WHITESPACE,
                 format_assertion: bool = True, property_order: str = "any", closed_objects: bool = False,
                 registry: Any = None, fast_forward: bool = True, schema_in_prompt: bool = False) -> None:
        if not isinstance(adapter, TransformersModel):
            raise ArgumentTypeError(
                "the first argument must come from maskforge.from_transformers(model, tokenizer), "
                f"got {type(adapter).__name__}"
            )
        self.adapter = adapter
        self.target: Target = resolve_target(target)
        self.max_json_whitespace = max_json_whitespace
        self.fast_forward = _flag(fast_forward, "fast_forward")
        self.schema_in_prompt = _flag(schema_in_prompt, "schema_in_prompt")
        self._last = threading.local()
        self._policies = {"format_assertion": format_assertion, "property_order": property_order,
                          "closed_objects": closed_objects, "registry": registry}
        self._bound: Dict[Optional[int], BoundSchema] = {}
        self._lock = threading.Lock()
        self._model_takes = set(inspect.signature(adapter.model.forward).parameters)
        self.bound_schema(max_json_whitespace)  # schema errors surface here, before any generation

    def bound_schema(self, max_json_whitespace: Optional[int] = _UNSET) -> BoundSchema:
        """The target bound to the adapter's vocabulary under ``max_json_whitespace`` (the
        generator's own when not given; cached)."""
        if max_json_whitespace is _UNSET:
            max_json_whitespace = self.max_json_whitespace
        with self._lock:
            bound = self._bound.get(max_json_whitespace)
        if bound is None:
            bound = self.adapter.bind(self.target, max_json_whitespace=max_json_whitespace, **self._policies)
            with self._lock:
                bound = self._bound.setdefault(max_json_whitespace, bound)
        return bound

    def __call__(self, prompt: Union[Prompt, Sequence[Prompt]], *, max_new_tokens: int = _DEFAULT_MAX_NEW_TOKENS,
                 max_json_whitespace: Optional[int] = _UNSET, fast_forward: Optional[bool] = None,
                 schema_in_prompt: Optional[bool] = None, **generation_kwargs: Any) -> Any:
        prompts, single = _prompts(prompt)
        run = self._run(max_new_tokens, max_json_whitespace, fast_forward, schema_in_prompt, generation_kwargs)
        encoded = [run.encode(item) for item in prompts]
        rows, stats = _drain(run.decode(encoded))
        self._last.stats = stats
        values = self._values(rows, run.sampling.num_return_sequences)
        return values[0] if single else values

    generate = __call__

    def stream(self, prompt: Union[Prompt, Sequence[Prompt]], *, max_new_tokens: int = _DEFAULT_MAX_NEW_TOKENS,
               max_json_whitespace: Optional[int] = _UNSET, fast_forward: Optional[bool] = None,
               schema_in_prompt: Optional[bool] = None, **generation_kwargs: Any) -> "Stream":
        """Generates as :meth:`__call__` does, yielding the text as tokens are chosen.

        For one prompt the stream yields ``str`` pieces; for a list, ``(row, piece)`` pairs.
        The pieces of a row join into exactly its text. Once the stream is exhausted its
        ``value`` is what the call would have returned (reading ``value`` earlier runs the rest
        of the generation first); a row that ran out of tokens raises
        ``GenerationTruncatedError`` at the end of the iteration. Beams, several sequences a
        prompt and drafted decoding need the whole call and are refused here.
        """
        prompts, single = _prompts(prompt)
        run = self._run(max_new_tokens, max_json_whitespace, fast_forward, schema_in_prompt, generation_kwargs)
        if run.sampling.uses_generate:
            raise UnsupportedGenerationModeError(
                "stream() decodes greedily or by sampling, one sequence a prompt: num_beams, num_return_sequences, "
                "assistant_model and prompt_lookup_num_tokens need the whole call (use the generator itself)"
            )
        encoded = [run.encode(item) for item in prompts]
        return Stream(self, run.decode(encoded), single)

    def map(self, prompts: Iterable[Prompt], *, batch_size: int = 8, progress: bool = False,
            **call_kwargs: Any) -> "MapResult":
        """Runs every prompt of ``prompts``, ``batch_size`` at a time, with the options of
        :meth:`__call__`. Returns a :class:`MapResult`: the values in the prompts' order and the
        error of each prompt that failed (it ran out of tokens, its value did not validate, it
        could not be encoded), without losing the prompts that succeeded. Options are checked
        before anything runs. ``progress=True`` shows a progress bar (tqdm, the ``progress``
        extra, or a line on standard error without it)."""
        if not _is_int(batch_size) or batch_size < 1:
            raise InvalidArgumentError(f"batch_size must be a positive int, got {batch_size!r}")
        items = list(prompts)
        options = dict(call_kwargs)
        run = self._run(options.pop("max_new_tokens", _DEFAULT_MAX_NEW_TOKENS), options.pop("max_json_whitespace", _UNSET),
                        options.pop("fast_forward", None), options.pop("schema_in_prompt", None), options)
        values: List[Any] = [None] * len(items)
        errors: Dict[int, Exception] = {}
        with _progress_bar(len(items), _flag(progress, "progress")) as bar:
            for start in range(0, len(items), batch_size):
                indices, encoded = [], []
                for index in range(start, min(start + batch_size, len(items))):
                    try:
                        encoded.append(run.encode(_prompt(items[index])))
                        indices.append(index)
                    except MaskForgeError as error:
                        errors[index] = error
                if encoded:
                    rows, stats = _drain(run.decode(encoded))
                    self._last.stats = stats
                    per_prompt = run.sampling.num_return_sequences
                    for position, index in enumerate(indices):
                        outcomes = [self._outcome(row) for row in rows[position * per_prompt:(position + 1) * per_prompt]]
                        failed = next((o for o in outcomes if isinstance(o, Exception)), None)
                        if failed is not None:
                            errors[index] = failed
                        else:
                            values[index] = outcomes if per_prompt > 1 else outcomes[0]
                bar.update(min(batch_size, len(items) - start))
        return MapResult(values, errors)

    @property
    def last_stats(self) -> Optional["GenerationStats"]:
        """The cost of this thread's last call (forward passes, tokens fast-forwarded), or
        ``None`` before any call; also set when the call raised ``GenerationTruncatedError``."""
        return getattr(self._last, "stats", None)

    def _run(self, max_new_tokens: Any, max_json_whitespace: Any, fast_forward: Any, schema_in_prompt: Any,
             generation_kwargs: Dict[str, Any]) -> "_Run":
        """Checks a call's options; what it needs to encode prompts and decode them."""
        fast_forward = self.fast_forward if fast_forward is None else _flag(fast_forward, "fast_forward")
        schema_in_prompt = (self.schema_in_prompt if schema_in_prompt is None
                            else _flag(schema_in_prompt, "schema_in_prompt"))
        if isinstance(max_new_tokens, bool) or not isinstance(max_new_tokens, int):
            raise ArgumentTypeError(f"max_new_tokens must be an int, got {type(max_new_tokens).__name__}")
        if max_new_tokens <= 0:
            raise InvalidArgumentError(f"max_new_tokens must be positive, got {max_new_tokens}")
        sampling = SamplingOptions.from_kwargs(generation_kwargs)
        if max_json_whitespace is _UNSET:
            max_json_whitespace = self.max_json_whitespace
        bound = self.bound_schema(max_json_whitespace)
        if schema_in_prompt and not self.target.is_json:
            raise InvalidArgumentError(f"schema_in_prompt needs a JSON Schema target; {self.target.description} has none")
        instruction = SCHEMA_INSTRUCTION.format(schema=self.target.schema_json) if schema_in_prompt else None
        return _Run(self.adapter, bound, max_new_tokens, sampling, self._model_takes, fast_forward, instruction)

    def _outcome(self, row: "_Row") -> Any:
        """A row's value, or the error that stands for it."""
        text = self.adapter.token_text(row.tokens).decode("utf-8", errors="replace")
        if not row.session.is_accepting():
            return GenerationTruncatedError(
                f"max_new_tokens ran out before the row completed an instance (it ends {text[-40:]!r}); raise "
                "max_new_tokens, or cap whitespace with max_json_whitespace",
                texts=[text],
            )
        try:
            return self.target.parse(text)
        except Exception as error:  # the target's parser (Pydantic validation, json) refused it
            return error

    def _values(self, rows: List["_Row"], per_prompt: int) -> List[Any]:
        texts = [self.adapter.token_text(row.tokens).decode("utf-8", errors="replace") for row in rows]
        truncated = [i for i, row in enumerate(rows) if not row.session.is_accepting()]
        if truncated:
            values = {i: self.target.parse(texts[i]) for i, row in enumerate(rows) if row.session.is_accepting()}
            endings = "; ".join(f"row {i} ends {texts[i][-40:]!r}" for i in truncated[:3])
            raise GenerationTruncatedError(
                f"max_new_tokens ran out before row(s) {', '.join(map(str, truncated))} of {len(rows)} completed "
                f"an instance ({endings}); raise max_new_tokens, or cap whitespace with max_json_whitespace",
                texts=texts,
                values=values,
            )
        values = [self.target.parse(text) for text in texts]
        if per_prompt > 1:
            values = [values[i:i + per_prompt] for i in range(0, len(values), per_prompt)]
        return values

    def __repr__(self) -> str:
        return f"Generator({self.adapter!r}, {self.target.description})"


class Stream:
    """The text of a :meth:`Generator.stream` call as it is chosen; ``value`` at the end."""

    def __init__(self, generator: Generator, events: Any, single: bool) -> None:
        self._generator = generator
        self._events = events
        self._single = single
        self._decoders: Dict[int, Any] = {}
        self._rows: Optional[List[_Row]] = None

    def __iter__(self) -> Iterator[Any]:
        return self

    def __next__(self) -> Any:
        while self._rows is None:
            try:
                row, tokens = next(self._events)
            except StopIteration as stop:
                self._rows, stats = stop.value
                self._generator._last.stats = stats
                self._value = self._generator._values(self._rows, 1)  # raises when a row ran out
                raise
            decoder = self._decoders.get(row)
            if decoder is None:
                decoder = self._decoders[row] = codecs.getincrementaldecoder("utf-8")(errors="replace")
            piece = decoder.decode(self._generator.adapter.token_text(tokens))
            if piece:
                return piece if self._single else (row, piece)
        raise StopIteration

    @property
    def value(self) -> Any:
        """What the call returns: one value for one prompt, a list for a list. Runs the rest of
        the generation first if the stream was not exhausted."""
        for _ in self:
            pass
        return self._value[0] if self._single else self._value


@dataclass
class MapResult:
    """What :meth:`Generator.map` produced: ``values[i]`` for prompt ``i`` (``None`` where it
    failed) and ``errors[i]``, the exception of each prompt that failed. Iterating, indexing and
    ``len`` go over ``values``."""

    values: List[Any]
    errors: Dict[int, Exception]

    @property
    def ok(self) -> bool:
        """Whether every prompt produced a value."""
        return not self.errors

    def __len__(self) -> int:
        return len(self.values)

    def __getitem__(self, index: int) -> Any:
        return self.values[index]

    def __iter__(self) -> Iterator[Any]:
        return iter(self.values)


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


@dataclass
class _Run:
    """One call's checked options: how its prompts are encoded and decoded."""

    adapter: TransformersModel
    bound: BoundSchema
    max_new_tokens: int
    sampling: SamplingOptions
    model_takes: set
    fast_forward: bool
    instruction: Optional[str]

    def encode(self, prompt: Prompt) -> List[int]:
        if isinstance(prompt, str):
            ids = self.adapter.encode(f"{self.instruction}\n\n{prompt}" if self.instruction else prompt)
        else:
            messages = [dict(message) for message in prompt]
            if self.instruction:
                if messages[0].get("role") == "system":
                    messages[0]["content"] = f"{messages[0]['content']}\n\n{self.instruction}"
                else:
                    messages.insert(0, {"role": "system", "content": self.instruction})
            ids = self.adapter.encode_chat(messages)
        if not ids:
            raise InvalidArgumentError("a prompt encodes to no tokens; give the model at least one token to start from")
        return ids

    def decode(self, encoded: List[List[int]]) -> Any:
        """A generator of ``(row, tokens)`` as tokens join rows; it returns ``(rows, stats)``."""
        if self.sampling.uses_generate:
            return _without_events(_decode_with_generate(self.adapter, self.bound, encoded, self.max_new_tokens,
                                                         self.sampling))
        return _decode(self.adapter, self.bound, encoded, self.max_new_tokens, self.sampling, self.model_takes,
                       self.fast_forward)


def _without_events(result: Any) -> Any:
    """A decoding generator that yields nothing and returns ``result``."""
    return result
    yield  # noqa: makes this a generator function


def _drain(events: Any) -> Any:
    """Runs a decoding generator to its end; what it returns."""
    while True:
        try:
            next(events)
        except StopIteration as stop:
            return stop.value


def _flag(value: Any, name: str) -> bool:
    if not isinstance(value, bool):
        raise ArgumentTypeError(f"{name} must be a bool, got {type(value).__name__}")
    return value


def _is_chat(value: Any) -> bool:
    return (isinstance(value, (list, tuple)) and len(value) > 0
            and all(isinstance(m, Mapping) for m in value))


def _prompt(value: Any) -> Prompt:
    """One prompt, checked: a string or a chat (a list of ``{"role", "content"}`` dicts)."""
    if isinstance(value, str):
        return value
    if _is_chat(value):
        for message in value:
            if not isinstance(message.get("role"), str) or not isinstance(message.get("content"), str):
                raise ArgumentTypeError(
                    f"a chat message must be a dict with a str 'role' and a str 'content', got {dict(message)!r}"
                )
        return list(value)
    raise ArgumentTypeError(
        f"a prompt must be a str or a chat (a list of {{'role', 'content'}} dicts), got {type(value).__name__}"
    )


def _prompts(prompt: Any) -> "tuple[List[Prompt], bool]":
    """The prompts of a call, and whether it was one prompt (one value back)."""
    if isinstance(prompt, str) or _is_chat(prompt):
        return [_prompt(prompt)], True
    if isinstance(prompt, (list, tuple)):
        if not prompt:
            raise InvalidArgumentError("the list of prompts is empty")
        return [_prompt(item) for item in prompt], False
    raise ArgumentTypeError(
        f"prompt must be a str, a chat (a list of {{'role', 'content'}} dicts) or a list of those, "
        f"got {type(prompt).__name__}"
    )


class _progress_bar:
    """tqdm when installed; a line on standard error otherwise; nothing when disabled."""

    def __init__(self, total: int, enabled: bool) -> None:
        self.total, self.done, self.bar = total, 0, None
        self.enabled = enabled
        if enabled:
            try:
                from tqdm.auto import tqdm
            except ImportError:
                pass
            else:
                self.bar = tqdm(total=total, unit="prompt", desc="maskforge")

    def update(self, n: int) -> None:
        self.done += n
        if self.bar is not None:
            self.bar.update(n)
        elif self.enabled:
            sys.stderr.write(f"\rmaskforge: {self.done}/{self.total} prompts")
            sys.stderr.flush()

    def __enter__(self) -> "_progress_bar":
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.bar is not None:
            self.bar.close()
        elif self.enabled:
            sys.stderr.write("\n")


def _decode(adapter: TransformersModel, bound: BoundSchema, encoded: List[List[int]], max_new_tokens: int,
            sampling: SamplingOptions, model_takes: set, fast_forward: bool) -> Any:
    """Decodes the encoded prompts as one left-padded batch. A generator: it yields
    ``(row, tokens)`` as tokens join a row (chosen, or forced with them) and returns
    ``(rows, stats)``."""
    import torch

    from .tensors import apply_token_bitmask_inplace, fill_masks

    input_ids, attention_mask = _left_padded(adapter, encoded)
    batch = input_ids.shape[0]
    rows = [_Row(bound.start_session(), []) for _ in range(batch)]
    sessions = [row.session for row in rows]
    stats = GenerationStats()
    eos = adapter.eos_token_ids[0]
    json_output = bound.output == "json"
    if fast_forward:
        # Every row starts in the same state: what the schema forces first joins the prompt.
        forced = adapter.forced_tokens(sessions[0], [])[:max_new_tokens]
        for index, row in enumerate(rows):
            row.session.advance_many(forced)
            row.tokens.extend(forced)
            _end_if_done(row.session, eos)
            if forced:
                yield index, forced
        stats.forced_tokens += len(forced) * batch
        if forced:
            input_ids = torch.cat([input_ids, torch.tensor([forced] * batch, dtype=torch.long)], dim=-1)
            attention_mask = torch.cat([attention_mask, torch.ones((batch, len(forced)), dtype=torch.long)], dim=-1)
    position_ids = (attention_mask.cumsum(-1) - 1).clamp(min=0)

    masks = torch.empty((batch, bound.mask_word_count), dtype=torch.int32)
    generators = _row_generators(sampling, batch)
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
            # The first token starts the value: whitespace alone is not offered before it (raw
            # text keeps its whitespace).
            for index, row in enumerate(rows):
                if not row.tokens and json_output:
                    masks[index] &= adapter.not_whitespace_row()
            apply_token_bitmask_inplace(logits, masks)
            chosen = _choose(logits, sampling, generators)
            pending: List[List[int]] = []
            for index, (row, token) in enumerate(zip(rows, chosen)):
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
                _end_if_done(row.session, eos)
                yield index, step
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



def _end_if_done(session: Any, eos: int) -> bool:
    """Ends ``session`` with EOS when its value is done (nothing but whitespace could follow):
    a row stops there rather than spending its budget on trailing whitespace."""
    if not session.is_finished() and session.is_done():
        session.advance(eos)
    return session.is_finished()


def _left_padded(adapter: TransformersModel, encoded: List[List[int]]) -> Any:
    """The prompts' token ids left-padded into one batch, and the attention mask over them."""
    import torch

    batch, width = len(encoded), max(len(ids) for ids in encoded)
    input_ids = torch.full((batch, width), adapter.pad_token_id, dtype=torch.long)
    attention_mask = torch.zeros((batch, width), dtype=torch.long)
    for row, ids in enumerate(encoded):
        if ids:
            input_ids[row, width - len(ids):] = torch.tensor(ids, dtype=torch.long)
            attention_mask[row, width - len(ids):] = 1
    return input_ids, attention_mask


def _decode_with_generate(adapter: TransformersModel, bound: BoundSchema, encoded: List[List[int]],
                          max_new_tokens: int, sampling: SamplingOptions) -> "tuple[List[_Row], GenerationStats]":
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
    groups = [[ids] for ids in encoded] if drafts else [encoded]
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
                    if _end_if_done(session, adapter.eos_token_ids[0]):
                        break
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

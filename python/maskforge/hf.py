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
from .errors import InvalidArgumentError, TokenRejectedError, UnsupportedGenerationModeError
from .targets import Target, resolve_target

__all__ = ["TransformersModel", "from_transformers", "LogitsProcessor", "DEFAULT_MAX_JSON_WHITESPACE"]

# The longest run of insignificant whitespace that generation (Generator, LogitsProcessor)
# allows unless told otherwise: room for `, ` or a newline and one space. Small models can spend
# any budget on whitespace, which changes no value; the compiler's own default is unbounded.
DEFAULT_MAX_JSON_WHITESPACE = 2

# (max_json_whitespace, format_assertion, property_order, closed_objects): the policies a
# compiler is built with.
CompilerKey = Tuple[Optional[int], bool, str, bool]


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
        self._splitter: Any = None
        self._not_whitespace: Any = None
        self._lock = threading.Lock()

    def bind(self, target: Any, *, max_json_whitespace: Optional[int] = None, format_assertion: bool = True,
             property_order: str = "any", closed_objects: bool = False, registry: Any = None) -> BoundSchema:
        """Compiles and binds ``target`` under the given policies and ``registry`` (the
        documents external ``$ref``s resolve to: a mapping or a callable, as for
        :class:`maskforge.Compiler`). Compilers, and so compiled executables, are kept per policy
        value; a bind with a registry gets a compiler of its own (registries are not kept, so a
        server passing a new one per request holds nothing after it)."""
        target = resolve_target(target)
        options = {"max_json_whitespace": max_json_whitespace, "format_assertion": format_assertion,
                   "property_order": property_order, "closed_objects": closed_objects}
        if registry is not None:
            compiler = Compiler(registry=registry, **options)
        else:
            key: CompilerKey = (max_json_whitespace, format_assertion, property_order, closed_objects)
            with self._lock:
                compiler = self._compilers.get(key)
                if compiler is None:
                    compiler = self._compilers[key] = Compiler(**options)
        # Compiler caches are thread-safe; the compile and the bind run outside the lock.
        return target.compile(compiler).bind(self.vocabulary)

    def forced_tokens(self, session: Any, generated: Sequence[int]) -> List[int]:
        """The tokens the tokenizer would produce for ``session``'s forced text after the
        ``generated`` tokens (see :mod:`maskforge.forcing`); empty when none can be appended
        exactly. The splitter behind it is built on first use and shared by threads."""
        splitter = self._splitter
        if splitter is None:
            from .forcing import TokenSplitter

            with self._lock:
                if self._splitter is None:
                    self._splitter = TokenSplitter(self.tokenizer, self.vocabulary)
                splitter = self._splitter
        return splitter.forced_tokens(session, generated)

    def encode(self, prompt: str) -> List[int]:
        """The prompt's token ids, as the tokenizer encodes it alone (special tokens included)."""
        return list(self.tokenizer(prompt)["input_ids"])

    def encode_chat(self, messages: Sequence[Dict[str, Any]]) -> List[int]:
        """The token ids of ``messages`` (``{"role", "content"}`` dicts) rendered by the
        tokenizer's chat template with the generation prompt (the assistant's turn opened)."""
        if not getattr(self.tokenizer, "chat_template", None):
            raise InvalidArgumentError(
                f"{type(self.tokenizer).__name__} has no chat template: pass the prompt as a string, or set "
                "tokenizer.chat_template"
            )
        ids = self.tokenizer.apply_chat_template(list(messages), add_generation_prompt=True, tokenize=True)
        if hasattr(ids, "keys"):  # a BatchEncoding (return_dict, the default in recent transformers)
            ids = ids["input_ids"]
        return [int(t) for t in ids]

    def not_whitespace_row(self) -> Any:
        """A mask row (int32 words) that allows every token except those made of JSON
        whitespace alone; built once and shared."""
        row = self._not_whitespace
        if row is None:
            import torch

            words = [0xFFFFFFFF] * ((self.vocabulary.mask_vocab_size + 31) // 32)
            for token in range(self.vocabulary.mask_vocab_size):
                text = self.vocabulary.token_bytes(token)
                if text and not text.strip(b" \t\n\r"):
                    words[token // 32] &= ~(1 << (token % 32))
            row = torch.tensor([w - (1 << 32) if w >= 1 << 31 else w for w in words], dtype=torch.int32)
            self._not_whitespace = row
        return row

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


class _Node:
    """A token sequence the processor has seen: its children by next token, and the session
    that has committed exactly its generated tokens (``None`` once pruned; rebuilt on demand)."""

    __slots__ = ("children", "session", "refused", "used")

    def __init__(self, session: Any = None) -> None:
        self.children: Dict[int, "_Node"] = {}
        self.session = session
        self.refused = False  # the schema refuses this sequence (and so every extension of it)
        self.used = 0


class LogitsProcessor:
    """A transformers logits processor that masks ``model.generate`` to a schema or type.

    ``LogitsProcessor(adapter, target, max_json_whitespace=..., format_assertion=...,
    property_order=..., closed_objects=..., registry=...)``; pass it in ``logits_processor=[...]``.
    ``max_json_whitespace`` defaults to :data:`DEFAULT_MAX_JSON_WHITESPACE` (2), not to the
    compiler's unbounded ``None``; pass ``None`` to lift the cap. It works with
    every decoding strategy ``generate`` offers for decoder-only models: greedy search,
    sampling, beam search (``num_beams``, with or without ``do_sample``),
    ``num_return_sequences``, assisted generation (``assistant_model``, which calls this
    processor for its drafts too) and prompt-lookup decoding (``prompt_lookup_num_tokens``).

    It keys sessions by the token sequence of each row rather than by row index: a row whose
    sequence was seen before gets that sequence's session; a row that extends a seen sequence
    starts from the deepest seen prefix (forked, so both stay valid) and advances the new
    tokens. Beams that swap rows, drafts that are rolled back and rows that share a past all
    get exactly the masks of a session that committed their tokens. A row the processor has
    neither seen nor seen the parent of is a new prompt (the first call of a ``generate``), so
    one processor can serve several ``generate`` calls in turn; :meth:`reset` drops what it
    has kept. A row whose generated tokens the schema refuses (a draft token that the
    verification step then discards) is left unmasked.

    Two rules end rows early without changing which values can come out: a row's first token
    starts the value (tokens of whitespace alone are masked out before it), and once a row's
    value is done (only whitespace could follow: after the root object's ``}``, a closed
    string, a literal) EOS is its only token.

    Calls are not thread-safe: use one processor per concurrent ``generate`` call.
    """

    # Sessions kept for seen sequences, beyond which the least recently used are dropped (a
    # dropped session is rebuilt from its nearest kept prefix when needed again).
    _MAX_KEPT_SESSIONS = 4096

    def __init__(self, adapter: TransformersModel, target: Any, **policies: Any) -> None:
        if not isinstance(adapter, TransformersModel):
            raise InvalidArgumentError("the first argument must come from maskforge.from_transformers(model, tokenizer)")
        policies.setdefault("max_json_whitespace", DEFAULT_MAX_JSON_WHITESPACE)
        self.adapter = adapter
        self.target: Optional[Target] = resolve_target(target)
        self.bound = adapter.bind(self.target, **policies)
        self.reset()

    @classmethod
    def over(cls, adapter: TransformersModel, bound: BoundSchema) -> "LogitsProcessor":
        """A processor masking to an already bound schema (bound to ``adapter.vocabulary``)."""
        processor = cls.__new__(cls)
        processor.adapter, processor.target, processor.bound = adapter, None, bound
        processor.reset()
        return processor

    def reset(self) -> None:
        """Forgets every sequence seen so far."""
        self._prompts: Dict[Tuple[int, ...], _Node] = {}
        self._prompt_lengths: List[int] = []
        self._rows: List[Optional[Any]] = []
        self._kept: Dict[int, _Node] = {}
        self._calls = 0

    @property
    def sessions(self) -> list:
        """The session of each row of the last call (``None`` for a row the schema refuses)."""
        return list(self._rows)

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        import torch

        from .tensors import apply_token_bitmask_inplace, fill_masks

        if scores.device.type != "cpu":
            raise UnsupportedGenerationModeError(f"scores on {scores.device}: the logits processor runs on the CPU")
        self._calls += 1
        located = [self._session_of(row) for row in input_ids.tolist()]
        rows = [session for session, _ in located]
        self._rows = rows
        self._prune()
        if any(session is not None for session in rows):
            masks = torch.empty((len(rows), self.bound.mask_word_count), dtype=torch.int32)
            fill_masks(rows, masks)
            for index, (session, at_start) in enumerate(located):
                if session is None or session.is_finished():
                    continue
                if session.is_done():
                    # The value is done (only whitespace could follow): EOS is the row's one token.
                    masks[index] = self._eos_row()
                elif at_start and self.bound.output == "json":
                    # The first token starts the value: whitespace alone is not offered before it
                    # (raw text keeps its whitespace).
                    masks[index] &= self.adapter.not_whitespace_row()
            # A new tensor, as transformers' own processors return: prompt lookup passes one
            # logits tensor to several calls and reads each result.
            scores = scores.clone()
            apply_token_bitmask_inplace(scores, masks)
        return scores

    def _eos_row(self) -> Any:
        """A mask row that allows the EOS tokens only."""
        import torch

        words = [0] * self.bound.mask_word_count
        for eos in self.adapter.eos_token_ids:
            if eos // 32 < len(words):
                words[eos // 32] |= 1 << (eos % 32)
        return torch.tensor([w - (1 << 32) if w >= 1 << 31 else w for w in words], dtype=torch.int32)

    def _session_of(self, row: List[int]) -> Tuple[Optional[Any], bool]:
        """The session that has committed ``row``'s generated tokens (``None`` if refused), and
        whether the row has generated nothing yet."""
        located = self._locate(row)
        if located is None:  # a new prompt
            node = self._prompts[tuple(row)] = _Node(self.bound.start_session())
            if len(row) not in self._prompt_lengths:
                self._prompt_lengths.append(len(row))
                self._prompt_lengths.sort(reverse=True)
            return node.session, True
        root, generated = located
        return self._advanced(root, generated), not generated

    def _advanced(self, root: _Node, generated: List[int]) -> Optional[Any]:
        """The session below ``root`` that has committed ``generated``, or ``None`` if refused."""
        # The deepest prefix with a session; the path below it is created as it is walked.
        base, base_depth, node = root, 0, root
        for depth, token in enumerate(generated, 1):
            child = node.children.get(token)
            if child is None:
                child = node.children[token] = _Node()
            node = child
            if node.refused:
                return None
            if node.session is not None:
                base, base_depth = node, depth
        if base is node:
            return self._touch(node)
        session = base.session.fork()
        walk = base
        for token in generated[base_depth:]:
            walk = walk.children[token]
            if session.is_finished():
                continue  # `generate` pads a finished row; its session stays finished
            try:
                session.advance(token)
            except TokenRejectedError:
                walk.refused = True
                return None
        node.session = session
        return self._touch(node)

    def _locate(self, row: List[int]) -> Optional[Tuple[_Node, List[int]]]:
        """The prompt ``row`` continues and its generated tokens, when ``row`` or its parent
        (``row`` less its last token) has been seen; ``None`` for a new prompt."""
        for length in self._prompt_lengths:
            if length > len(row):
                continue
            root = self._prompts.get(tuple(row[:length]))
            if root is None:
                continue
            generated = row[length:]
            node = root
            for token in generated[:-1]:
                node = node.children.get(token)
                if node is None:
                    break
            else:
                return root, generated
        return None

    def _touch(self, node: _Node) -> Any:
        node.used = self._calls
        self._kept[id(node)] = node
        return node.session

    def _prune(self) -> None:
        if len(self._kept) <= self._MAX_KEPT_SESSIONS:
            return
        by_age = sorted(self._kept.values(), key=lambda node: node.used)
        for node in by_age[: len(by_age) // 2]:
            if node.used < self._calls:
                node.session = None
                del self._kept[id(node)]

"""A vLLM structured-output backend over MaskForge sessions.

:class:`MaskForgeBackend` and :class:`MaskForgeGrammar` implement vLLM's
``StructuredOutputBackend`` and ``StructuredOutputGrammar``
(``vllm/v1/structured_output/backend_types.py``), and subclass them when vLLM is installed.
They take every request kind but GRAMMAR (see :mod:`maskforge.integrations.requests`).

vLLM picks its backend from a fixed list of names and has no registration hook. Two ways to
select MaskForge, both documented in docs/serving.md:

- :func:`install` (in every vLLM process): MaskForge takes the ``"guidance"`` slot of vLLM's
  backend list, backend and frontend check, so ``structured_outputs_config={"backend":
  "guidance"}`` selects it.
- vLLM's general-plugin entry point, which maskforge declares (``vllm.general_plugins``,
  ``maskforge = maskforge.integrations.vllm:register``): vLLM runs it in each of its
  processes, and it calls :func:`install` when the environment sets ``MASKFORGE_VLLM=1``, so
  installing maskforge beside vLLM changes nothing until asked.

Conventions kept (checked against vLLM 0.33): the request's stop tokens
(``compile_grammar(..., stop_token_ids)``, vLLM's ``all_stop_token_ids``) end it where the
output is complete and nowhere else; ``is_terminated`` once one is committed, after which
``accept_tokens`` ignores tokens and a row is all ones, as vLLM fills rows of finished requests;
``accept_tokens`` commits its tokens up to the first stop, or none and returns False when one
is refused; ``validate_tokens`` returns the accepted prefix, up to a stop at the latest, and
leaves the state as it was; ``rollback`` undoes up to the speculative
config's ``num_speculative_tokens`` (the sessions keep that many). Masks are written straight
into rows of vLLM's int32 bitmask (CPU, ``[rows, ceil(vocab_size / 32)]``).
"""

from __future__ import annotations

import dataclasses
import os
from typing import Any, Iterable, List, Optional, Sequence

from .._native import Compiler, Session, fill_masks
from ..errors import MaskForgeError, TokenRejectedError
from .requests import ProgramCache, RequestKind, compile_request, vocabulary_from_tokenizer

try:  # vLLM is optional: without it the classes keep the same interface, for tests and tools.
    from vllm.v1.structured_output.backend_types import StructuredOutputBackend as _Backend
    from vllm.v1.structured_output.backend_types import StructuredOutputGrammar as _Grammar
except ImportError:  # pragma: no cover - depends on what is installed
    _Backend = object  # type: ignore[assignment,misc]
    _Grammar = object  # type: ignore[assignment,misc]

__all__ = ["MaskForgeBackend", "MaskForgeGrammar", "install", "register", "fill_bitmasks", "validate_request"]


class MaskForgeGrammar(_Grammar):  # type: ignore[misc,valid-type]
    """One request's constraint: a MaskForge session. ``stop_token_ids``: the request's stop
    tokens (vLLM's ``all_stop_token_ids``), which end the output where the vocabulary's EOS
    would and nowhere else; ``None``: the vocabulary's EOS."""

    def __init__(self, session: Session, eos_token_id: int, stop_token_ids: Optional[Iterable[int]] = None) -> None:
        self.session = session
        self._eos = eos_token_id
        stops = {int(t) for t in stop_token_ids} if stop_token_ids else {eos_token_id}
        self._stops = frozenset(stops)
        # Rows need fixing where the stop set is not the EOS alone: stops other than EOS take
        # EOS's bit, and EOS outside the set loses it.
        self._fixed = sorted(stops | {eos_token_id}) if stops != {eos_token_id} else []

    def _as_session_tokens(self, tokens: Sequence[int]) -> List[int]:
        """``tokens`` up to and including the first stop, stops spelled as EOS; an EOS that is
        not a stop becomes -1, which no session commits."""
        mapped = []
        for token in tokens:
            if token in self._stops:
                mapped.append(self._eos)
                break
            mapped.append(-1 if token == self._eos else int(token))
        return mapped

    def accept_tokens(self, request_id: str, tokens: List[int]) -> bool:
        """Commits ``tokens`` up to the first stop token, or none when one is refused (then
        False). Once terminated, tokens are ignored (True), as vLLM expects."""
        if self.session.is_finished():
            return True
        try:
            self.session.advance_many(self._as_session_tokens(tokens))
        except TokenRejectedError:
            return False
        return True

    def validate_tokens(self, tokens: List[int]) -> List[int]:
        """The longest prefix of ``tokens`` the grammar accepts, ending at a stop token at the
        latest; the state is unchanged."""
        if self.session.is_finished():
            return []
        mapped = self._as_session_tokens(tokens)
        refused_eos = next((i for i, t in enumerate(mapped) if t < 0), len(mapped))
        return list(tokens[: self.session.validate_tokens(mapped[:refused_eos])])

    def rollback(self, num_tokens: int) -> None:
        """Undoes the last ``num_tokens`` committed tokens."""
        if num_tokens:
            self.session.rollback(num_tokens)

    def fill_bitmask(self, bitmask: Any, idx: int) -> None:
        """Writes the allowed tokens into row ``idx`` of vLLM's int32 bitmask (every bit set
        once terminated)."""
        row = bitmask[idx]
        if self.session.is_finished():
            row.fill_(-1)
            return
        self.session.write_mask(row)
        if self._fixed:
            can_end = self.session.is_allowed(self._eos)
            for token in self._fixed:
                word, bit = divmod(token, 32)
                value = int(row[word]) & 0xFFFFFFFF
                value = value | (1 << bit) if can_end and token in self._stops else value & ~(1 << bit)
                row[word] = value - (1 << 32) if value >= 1 << 31 else value

    def is_terminated(self) -> bool:
        """True once a stop token was committed."""
        return self.session.is_finished()

    def reset(self) -> None:
        """Back to the start of the output."""
        self.session.reset()


def fill_bitmasks(grammars: List[Optional[MaskForgeGrammar]], bitmask: Any, rows: List[int]) -> None:
    """Writes the masks of many grammars into their rows of ``bitmask`` in one call, GIL
    released (``None`` or terminated grammars get every bit set)."""
    sessions = [g.session if g is not None and not g.session.is_finished() else None for g in grammars]
    fill_masks(sessions, bitmask, rows)


@dataclasses.dataclass
class MaskForgeBackend(_Backend):  # type: ignore[misc,valid-type]
    """vLLM's backend interface over a MaskForge compiler and the tokenizer's vocabulary."""

    vllm_config: Any
    tokenizer: Any
    vocab_size: int

    def __post_init__(self) -> None:
        config = getattr(self.vllm_config, "structured_outputs_config", None) or getattr(
            self.vllm_config, "decoding_config", None
        )
        compact = bool(getattr(config, "disable_any_whitespace", False))
        closed = bool(getattr(config, "disable_additional_properties", False))
        self.compiler = Compiler(max_json_whitespace=0 if compact else None, closed_objects=closed)
        self.vocabulary = vocabulary_from_tokenizer(self.tokenizer, self.vocab_size)
        self.programs = ProgramCache(self.compiler, self.vocabulary)
        speculative = getattr(self.vllm_config, "speculative_config", None)
        self.max_rollback_tokens = int(getattr(speculative, "num_speculative_tokens", 0) or 0) if speculative else 0

    def compile_grammar(self, request_type: Any, grammar_spec: str, stop_token_ids: Optional[Iterable[int]] = None) -> MaskForgeGrammar:
        """A grammar for one request (``request_type``: a ``StructuredOutputOptions``;
        ``stop_token_ids``: the request's stop tokens, default the tokenizer's EOS)."""
        bound = self.programs.bound(RequestKind.of(request_type), grammar_spec)
        session = bound.start_session(max_rollback_tokens=self.max_rollback_tokens)
        return MaskForgeGrammar(session, self.vocabulary.eos_token_ids[0], stop_token_ids)

    def allocate_token_bitmask(self, max_num_seqs: int) -> Any:
        """``[max_num_seqs, ceil(vocab_size / 32)]`` int32, every token allowed."""
        import torch

        return torch.full((max_num_seqs, (self.vocab_size + 31) // 32), -1, dtype=torch.int32)

    def destroy(self) -> None:
        """Drops the bound programs."""
        self.programs = ProgramCache(self.compiler, self.vocabulary)


_VALIDATOR: Optional[Compiler] = None


def validate_request(sampling_params: Any, tokenizer: Any = None) -> None:
    """vLLM's frontend check of a request, for the slot MaskForge takes: the request's
    constraint compiles (programs are cached, so the engine core's compile of the same
    request hits), or ``VLLMValidationError`` with MaskForge's diagnostic."""
    global _VALIDATOR
    from vllm.exceptions import VLLMValidationError
    from vllm.v1.structured_output.request import get_structured_output_key

    structured = sampling_params.structured_outputs
    if structured is None:
        return
    if _VALIDATOR is None:
        _VALIDATOR = Compiler()
    kind, spec = get_structured_output_key(structured)
    try:
        compile_request(_VALIDATOR, RequestKind.of(kind), spec)
    except MaskForgeError as error:
        raise VLLMValidationError(f"Invalid structured output request: {error}") from error


def install() -> None:
    """Makes vLLM's ``"guidance"`` backend slot MaskForge's in this process:
    ``structured_outputs_config={"backend": "guidance"}`` then selects MaskForge, and the
    frontend's check of requests for that slot is MaskForge's own (:func:`validate_request`).
    Choices reach the backend as choices there (the ``"xgrammar"`` and ``"auto"`` slots rewrite
    them into EBNF, which MaskForge does not read). Idempotent."""
    import vllm.v1.structured_output as structured_output
    from vllm.v1.structured_output import backend_guidance

    structured_output.GuidanceBackend = MaskForgeBackend
    backend_guidance.validate_guidance_grammar = validate_request


def register() -> None:
    """vLLM's general-plugin entry point, run in each vLLM process: :func:`install` when the
    environment sets ``MASKFORGE_VLLM=1``."""
    if os.environ.get("MASKFORGE_VLLM") == "1":
        install()

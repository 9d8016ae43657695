"""An SGLang grammar backend over MaskForge sessions.

:class:`MaskForgeGrammarBackend` and :class:`MaskForgeGrammar` implement SGLang's
``BaseGrammarBackend`` and ``BaseGrammarObject``
(``python/sglang/srt/constrained/base_grammar_backend.py``), and subclass them when SGLang is
installed (checked against SGLang 0.5.23). :func:`register` adds the backend to SGLang's
registry under ``"maskforge"`` (``register_grammar_backend``) and to the choices of
``--grammar-backend``, so that ``grammar_backend="maskforge"`` selects it.

Conventions kept: JSON, regex and structural-tag requests compile (``dispatch_json``,
``dispatch_regex``, ``dispatch_structural_tag``); EBNF grammars are refused, with the error
recorded, as an invalid grammar is (SGLang's ``InvalidGrammarObject``: the request is
aborted with the message, never run unconstrained). ``accept_token`` raises ``TokenRejectedError`` (a
``ValueError``) for a refused token and does nothing once EOS was committed; ``copy`` forks the
session (parallel sampling); jump-forward is the session's forced text: what every accepted
continuation starts with.
"""

from __future__ import annotations

import logging
from typing import Any, List, Optional, Sequence, Tuple

from .._native import Compiler, Session, fill_masks
from ..errors import MaskForgeError
from .requests import ProgramCache, RequestKind, vocabulary_from_tokenizer

try:  # SGLang is optional: without it the classes keep the same interface, for tests and tools.
    from sglang.srt.constrained import base_grammar_backend as _sglang
except ImportError:  # pragma: no cover - depends on what is installed
    _sglang = None

_GrammarBase: Any = _sglang.BaseGrammarObject if _sglang is not None else object
_BackendBase: Any = _sglang.BaseGrammarBackend if _sglang is not None else object

__all__ = ["MaskForgeGrammar", "MaskForgeGrammarBackend", "register", "create_backend"]

logger = logging.getLogger(__name__)


class MaskForgeGrammar(_GrammarBase):
    """One request's constraint: a MaskForge session."""

    def __init__(self, session: Session, vocab_size: int) -> None:
        if _GrammarBase is not object:
            super().__init__()
        self._finished = False
        self.grammar_stats = None
        self.current_token: Optional[int] = None
        self.session = session
        self.vocab_size = vocab_size

    # SGLang reads and sets `finished` (the request's own end, which may come before EOS).
    @property
    def finished(self) -> bool:
        return self._finished

    @finished.setter
    def finished(self, finished: bool) -> None:
        self._finished = finished

    def accept_token(self, token: int) -> None:
        """Commits ``token``; a refused one raises ``TokenRejectedError`` (a ``ValueError``, as
        SGLang's backends raise) and changes nothing. Ignored once terminated."""
        if not self.session.is_finished():
            self.current_token = token
            self.session.advance(int(token))

    def rollback(self, k: int) -> None:
        """Undoes the last ``k`` committed tokens."""
        if k:
            self.session.rollback(k)

    def is_terminated(self) -> bool:
        """True once EOS was committed."""
        return self.session.is_finished()

    def allocate_vocab_mask(self, vocab_size: int, batch_size: int, device: Any) -> Any:
        """``[batch_size, ceil(vocab_size / 32)]`` int32 on the CPU, every token allowed (SGLang
        moves it to ``device`` with :meth:`move_vocab_mask`)."""
        import torch

        return torch.full((batch_size, (vocab_size + 31) // 32), -1, dtype=torch.int32)

    def fill_vocab_mask(self, vocab_mask: Any, idx: int) -> None:
        """Writes the allowed tokens into row ``idx`` (every bit set once terminated)."""
        if self.session.is_finished():
            vocab_mask[idx].fill_(-1)
        else:
            self.session.write_mask(vocab_mask[idx])

    @staticmethod
    def fill_vocab_mask_batched(entries: Sequence[Any], vocab_mask: Any) -> None:
        """Fills the listed rows (``GrammarRow(row, grammar)`` entries) in one call, GIL
        released; other rows are left as they are."""
        mine = [e for e in entries if isinstance(e.grammar, MaskForgeGrammar)]
        for entry in entries:
            if not isinstance(entry.grammar, MaskForgeGrammar):
                entry.grammar.fill_vocab_mask(vocab_mask, entry.row)
        sessions = [None if e.grammar.session.is_finished() else e.grammar.session for e in mine]
        if mine:
            fill_masks(sessions, vocab_mask, [e.row for e in mine])

    @staticmethod
    def reset_vocab_mask(vocab_mask: Any) -> None:
        """Every token allowed again, in every row."""
        vocab_mask.fill_(-1)

    @staticmethod
    def move_vocab_mask(vocab_mask: Any, device: Any) -> Any:
        return vocab_mask.to(device, non_blocking=True)

    @staticmethod
    def apply_vocab_mask(logits: Any, vocab_mask: Any) -> None:
        """Sets the logits of refused tokens to ``-inf`` in place, on the logits' device: bit
        ``t % 32`` of word ``t // 32`` of a row allows token ``t``."""
        import torch

        shifts = torch.arange(32, device=vocab_mask.device, dtype=torch.int32)
        bits = (vocab_mask.unsqueeze(-1) >> shifts) & 1
        allowed = bits.reshape(vocab_mask.shape[0], -1)[:, : logits.shape[-1]].to(torch.bool)
        if allowed.shape[-1] < logits.shape[-1]:  # logits wider than the mask: the rest refused
            pad = torch.zeros(allowed.shape[0], logits.shape[-1] - allowed.shape[-1], dtype=torch.bool, device=allowed.device)
            allowed = torch.cat([allowed, pad], dim=-1)
        logits.masked_fill_(~allowed.to(logits.device), float("-inf"))

    def copy(self) -> "MaskForgeGrammar":
        """A grammar at the same position with a history of its own (parallel sampling)."""
        return MaskForgeGrammar(self.session.fork(), self.vocab_size)

    def try_jump_forward(self, tokenizer: Any) -> Optional[Tuple[List[int], str]]:
        """``([], text)`` when every accepted continuation starts with ``text`` (the forced
        text, up to its last whole UTF-8 character), else ``None``."""
        text = _whole_characters(self.session.forced_bytes())
        return ([], text) if text else None

    def jump_forward_str_state(self, helper: Tuple[List[int], str]) -> Tuple[str, int]:
        return helper[1], -1

    def jump_and_retokenize(self, old_output_ids: Sequence[int], new_output_ids: Sequence[int], next_state: int) -> None:
        """After SGLang appended the jump-forward text and tokenized the output again: undoes
        the tokens past the common prefix and commits the new ones."""
        common = 0
        for old, new in zip(old_output_ids, new_output_ids):
            if old != new:
                break
            common += 1
        self.rollback(len(old_output_ids) - common)
        self.session.advance_many([int(t) for t in new_output_ids[common:]])


def _whole_characters(data: bytes) -> str:
    """``data`` decoded, without a last character that is cut short."""
    for cut in range(len(data), max(len(data) - 4, -1), -1):
        try:
            return data[:cut].decode("utf-8")
        except UnicodeDecodeError:
            continue
    return ""


class MaskForgeGrammarBackend(_BackendBase):
    """SGLang's grammar backend interface over a MaskForge compiler; the base class keeps the
    cache of compiled grammars and hands each request a ``copy``."""

    def __init__(self, tokenizer: Any, vocab_size: int, eos_token_ids: Optional[Sequence[int]] = None, *,
                 max_rollback_tokens: Optional[int] = None, any_whitespace: bool = True) -> None:
        if _BackendBase is not object:
            super().__init__()
        self.compiler = Compiler(max_json_whitespace=None if any_whitespace else 0)
        self.vocab_size = int(vocab_size)
        self.vocabulary = vocabulary_from_tokenizer(tokenizer, vocab_size, eos_token_ids)
        self.programs = ProgramCache(self.compiler, self.vocabulary)
        self.max_rollback_tokens = max_rollback_tokens
        self.errors: List[Tuple[str, str, str]] = []

    def _grammar(self, kind: RequestKind, key_string: Any) -> Any:
        try:
            bound = self.programs.bound(kind, key_string)
        except MaskForgeError as error:
            return self._invalid(kind, key_string, error)
        return MaskForgeGrammar(bound.start_session(max_rollback_tokens=self.max_rollback_tokens), self.vocab_size)

    def _invalid(self, kind: RequestKind, key_string: Any, error: Exception) -> Any:
        """SGLang's invalid-grammar value (the request is aborted with the message), never an
        unconstrained request."""
        message = f"{type(error).__name__}: {error}"
        self.errors.append((kind.value, str(key_string), message))
        logger.warning("maskforge refused a %s request: %s", kind.value, message)
        if _sglang is not None and hasattr(_sglang, "InvalidGrammarObject"):
            return _sglang.InvalidGrammarObject(message)
        if _sglang is not None and getattr(_sglang, "INVALID_GRAMMAR_OBJ", None) is not None:
            return _sglang.INVALID_GRAMMAR_OBJ
        raise error

    def dispatch_json(self, key_string: str) -> Any:
        # SGLang passes "$$ANY$$" for any JSON object (its json_object response format).
        if key_string == "$$ANY$$":
            return self._grammar(RequestKind.JSON_OBJECT, None)
        return self._grammar(RequestKind.JSON, key_string)

    def dispatch_regex(self, key_string: str) -> Any:
        return self._grammar(RequestKind.REGEX, key_string)

    def dispatch_structural_tag(self, key_string: str) -> Any:
        return self._grammar(RequestKind.STRUCTURAL_TAG, key_string)

    def dispatch_ebnf(self, key_string: str) -> Any:
        return self._grammar(RequestKind.GRAMMAR, key_string)


def create_backend(server_args: Any, tokenizer: Any, vocab_size: int, eos_token_ids: Optional[Sequence[int]]) -> MaskForgeGrammarBackend:
    """The factory SGLang's registry calls: ``(server_args, tokenizer, vocab_size, eos_token_ids)``.
    Whitespace follows SGLang's ``constrained_json_disable_any_whitespace``; sessions keep 200
    tokens of history for rollback, as SGLang's XGrammar backend does."""
    eos = sorted(int(t) for t in eos_token_ids) if eos_token_ids else None
    serving = _sglang.get_serving() if _sglang is not None and hasattr(_sglang, "get_serving") else server_args
    compact = bool(getattr(serving, "constrained_json_disable_any_whitespace", False))
    return MaskForgeGrammarBackend(tokenizer, vocab_size, eos, max_rollback_tokens=200, any_whitespace=not compact)


def register() -> None:
    """Registers the backend with SGLang under ``"maskforge"``, and adds the name to the
    choices of ``--grammar-backend``."""
    if _sglang is None:
        raise ImportError("sglang is not installed")
    _sglang.register_grammar_backend("maskforge", create_backend)
    try:
        from sglang.srt.arg_groups.choices import GRAMMAR_BACKEND_CHOICES
    except ImportError:  # older SGLang: the registry alone, selected through ServerArgs
        return
    if "maskforge" not in GRAMMAR_BACKEND_CHOICES:
        GRAMMAR_BACKEND_CHOICES.append("maskforge")

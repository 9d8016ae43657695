"""A logits processor for llama-cpp-python (``llama_cpp.Llama``), the CPU engine for GGUF
models.

    llm = llama_cpp.Llama(model_path="model.gguf", n_threads=2)
    vocabulary = maskforge.integrations.llama_cpp.vocabulary(llm)
    processor = maskforge.integrations.llama_cpp.LogitsProcessor(vocabulary, Profile)
    out = llm.create_chat_completion(messages, logits_processor=llama_cpp.LogitsProcessorList([processor]))
    processor.check()                       # raises what went wrong inside the callback, if anything
    profile = processor.parse(out["choices"][0]["message"]["content"])

What llama-cpp-python does that the processor has to know (checked against 0.3.36):

- ``scores`` is the full vocabulary's logits, indexed by token id, and must be returned.
- ``input_ids`` is the prompt and every generated token but the one being sampled; nothing
  gives the prompt's length, so the first call of a generation takes it as the prompt.
- An exception raised in a processor is printed and dropped by the ctypes callback it runs in,
  and generation goes on unmasked. The processor never lets one escape: it keeps the error,
  allows only EOS from then on, and :meth:`LogitsProcessor.check` raises it.
- ``create_completion(logit_bias=...)`` drops every logits processor (a list ``extend`` whose
  result is None): pass no ``logit_bias`` with it. ``draft_model`` puts draft tokens into
  ``input_ids``; it is not supported.

Token bytes come from ``llama_token_to_piece`` (the GGUF's own vocabulary); control tokens
have none, and EOS is every end-of-generation token the model names (``llama_vocab_is_eog``).
The processor's rules are those of the transformers processor: JSON values start at the first
token (whitespace alone is not offered before them), and once a value is done (only
whitespace could follow) EOS is the only token.
"""

from __future__ import annotations

import ctypes
from typing import Any, Optional

import numpy as np

from .._native import Compiler, Vocabulary
from ..targets import resolve_target
from ..tensors import apply_token_bitmask_inplace

__all__ = ["vocabulary", "LogitsProcessor", "DEFAULT_MAX_JSON_WHITESPACE"]

DEFAULT_MAX_JSON_WHITESPACE = 2


def vocabulary(llm: Any) -> Vocabulary:
    """The vocabulary of a loaded ``llama_cpp.Llama``: each token's bytes as the model's own
    vocabulary spells them, control tokens without bytes, EOS every end-of-generation token."""
    from llama_cpp import llama_cpp as native

    vocab = llm._model.vocab
    size = llm.n_vocab()
    buffer = ctypes.create_string_buffer(256)
    no_text = native.LLAMA_TOKEN_ATTR_CONTROL | native.LLAMA_TOKEN_ATTR_UNKNOWN

    def piece(token: int) -> Optional[bytes]:
        if native.llama_vocab_get_attr(vocab, token) & no_text:
            return None
        n = native.llama_token_to_piece(vocab, token, buffer, len(buffer), 0, False)
        if n < 0:  # longer than the buffer: -n is the length it needs
            bigger = ctypes.create_string_buffer(-n)
            n = native.llama_token_to_piece(vocab, token, bigger, -n, 0, False)
            return bigger.raw[:n]
        return buffer.raw[:n]

    eos = [t for t in range(size) if native.llama_vocab_is_eog(vocab, t)]
    return Vocabulary.from_id_ordered_tokens([piece(t) for t in range(size)], eos, mask_vocab_size=size)


class LogitsProcessor:
    """Masks one generation at a time to ``target`` (a schema, a Pydantic-compatible type, a
    ``maskforge.Regex`` / ``Choice`` / ``Template``). A new generation (a call whose
    ``input_ids`` do not extend the last one's) starts a new session, so one processor serves
    generations one after another. Not thread-safe."""

    def __init__(self, vocabulary: Vocabulary, target: Any, *, compiler: Optional[Compiler] = None, **policies: Any) -> None:
        policies.setdefault("max_json_whitespace", DEFAULT_MAX_JSON_WHITESPACE)
        self.target = resolve_target(target)
        self.vocabulary = vocabulary
        self.bound = self.target.compile(compiler or Compiler(**policies)).bind(vocabulary)
        self.session: Any = None
        self.error: Optional[BaseException] = None
        self._seen: list = []
        self._prompt_length = 0
        self._mask = np.empty(self.bound.mask_word_count, dtype=np.int32)
        self._eos = np.zeros(self.bound.mask_word_count, dtype=np.uint32)
        for t in vocabulary.eos_token_ids:
            self._eos[t // 32] |= np.uint32(1 << (t % 32))
        self._eos = self._eos.view(np.int32)
        self._not_whitespace: Optional[np.ndarray] = None

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        try:
            self._mask_into(list(map(int, input_ids)), scores)
        except Exception as error:  # the ctypes callback would drop it: keep it, end the output
            if self.error is None:
                self.error = error
            scores[:] = -np.inf
            scores[[t for t in self.vocabulary.eos_token_ids if t < len(scores)]] = 0.0
        return scores

    def _mask_into(self, ids: list, scores: Any) -> None:
        if self.session is None or ids[: len(self._seen)] != self._seen or len(ids) < self._prompt_length:
            self.session, self.error = self.bound.start_session(), None
            self._prompt_length = len(ids)
            self._seen = list(ids)
        new = ids[len(self._seen):]
        if new:
            self.session.advance_many(new)
            self._seen = list(ids)
        if self.error is not None:
            raise self.error
        if self.session.is_done():
            mask = self._eos
        else:
            self.session.write_mask(self._mask)
            mask = self._mask
            if len(ids) == self._prompt_length and self.bound.output == "json":
                mask = mask & self._not_whitespace_row()
        if len(scores) != self.bound.mask_vocab_size:
            raise ValueError(f"{len(scores)} logits for a vocabulary of {self.bound.mask_vocab_size} tokens")
        apply_token_bitmask_inplace(scores, mask)

    def _not_whitespace_row(self) -> np.ndarray:
        if self._not_whitespace is None:
            row = np.full(self.bound.mask_word_count, 0xFFFFFFFF, dtype=np.uint32)
            for t in range(self.bound.mask_vocab_size):
                text = self.vocabulary.token_bytes(t)
                if text and not text.strip(b" \t\n\r"):
                    row[t // 32] &= np.uint32(~(1 << (t % 32)) & 0xFFFFFFFF)
            self._not_whitespace = row.view(np.int32)
        return self._not_whitespace

    def check(self) -> None:
        """Raises the error the last generation met inside the callback, if any."""
        if self.error is not None:
            raise self.error

    def parse(self, text: str) -> Any:
        """What the target makes of the generated text (a validated value, the chosen string,
        tool calls...); raises what :meth:`check` raises first."""
        self.check()
        return self.target.parse(text)

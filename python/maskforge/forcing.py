"""Forced tokens: the text a session forces next (``Session.forced_bytes()``), turned into the
tokens the tokenizer itself would produce there.

Appending a forced text's tokens must not change how the text is tokenized: the tokenizer would
often merge the last forced bytes with what follows (``"name"`` then ``:`` may be ``":``), and a
model fed a spelling it never saw decodes worse. So only tokens that end at a *fixed boundary*
are kept, a place where the tokenizer splits whatever text comes after:

- a pre-tokenizer boundary before the text's last pre-token (a regex split, as in GPT-2 and
  Llama-3, never moves once the next character is known; the last pre-token may still grow);
- a place that no vocabulary token can straddle, given the text on its left and any text on
  its right (BPE merges and Unigram segmentations never cross such a place, so it holds for
  SentencePiece vocabularies, which have no pre-tokenizer, too).

The generated text is tokenized as it follows a newline (the usual end of a prompt). While the
tokens generated so far are the tokenizer's own for their text, the forced text is tokenized
with them, and the forced tokens are exactly what the tokenizer produces for the final text.
When they are not (a model often ends a string with a lone `"` where the tokenizer would read
`",`), the forced text is tokenized from where the generated tokens end, a boundary those
committed tokens already fix.
"""

from __future__ import annotations

import bisect
from typing import Any, List, Optional, Sequence

__all__ = ["TokenSplitter", "forced_tokens"]

# The text the generated text is tokenized after: a pre-tokenizer boundary in every tokenizer
# this was checked on (GPT-2, Llama-3, Qwen2.5, Mistral, Llama-2 SentencePiece).
_CONTEXT = "\n"


class TokenSplitter:
    """A tokenizer and the vocabulary's token bytes, prepared to find fixed boundaries.

    ``tokenizer`` is a ``tokenizers.Tokenizer`` or a transformers fast tokenizer; ``vocabulary``
    the :class:`maskforge.Vocabulary` built from it (its token bytes are exact).
    """

    def __init__(self, tokenizer: Any, vocabulary: Any) -> None:
        self.tokenizer = getattr(tokenizer, "backend_tokenizer", tokenizer)
        self.vocabulary = vocabulary
        pieces = {vocabulary.token_bytes(t) for t in range(vocabulary.tokenizer_size)}
        self._pieces = sorted(p for p in pieces if p is not None and len(p) > 1)
        self._longest = max((len(p) for p in self._pieces), default=1)
        context = self.tokenizer.encode(_CONTEXT, add_special_tokens=False)
        self._context_ids = list(context.ids)

    def token_bytes(self, tokens: Sequence[int]) -> bytes:
        return b"".join(self.vocabulary.token_bytes(t) or b"" for t in tokens)

    def forced_tokens(self, session: Any, generated: Sequence[int]) -> List[int]:
        """The tokens to append for ``session``'s forced text after ``generated`` (the tokens
        the session has committed); empty when none can be appended exactly."""
        forced = _complete_utf8(session.forced_bytes())
        if not forced:
            return []
        # Tokenized with the generated text when its tokens are the tokenizer's own; else from
        # the boundary the generated tokens end at, which the committed tokens already fix.
        tokens = self._after(self.token_bytes(generated), list(generated), forced)
        return tokens if tokens is not None else self._after(b"", [], forced) or []

    def _after(self, before: bytes, generated: List[int], forced: bytes) -> Optional[List[int]]:
        """The forced text's tokens up to the last fixed boundary when ``before + forced`` is
        tokenized as ``generated`` then more tokens; ``None`` when it is not."""
        text = before + forced
        try:
            encoding = self.tokenizer.encode(_CONTEXT + text.decode("utf-8"), add_special_tokens=False)
        except UnicodeDecodeError:
            return None
        ids, words = list(encoding.ids), list(encoding.word_ids)
        context = len(self._context_ids)
        if ids[:context] != self._context_ids or ids[context:context + len(generated)] != generated:
            return None
        ends, end = [], 0
        for token in ids[context:]:
            end += len(self.vocabulary.token_bytes(token) or b"")
            ends.append(end)
        if end != len(text):
            return None  # a normalizer changed the text: its tokens cannot be placed exactly
        words = words[context:]
        candidates = ids[context + len(generated):]
        # The longest run of them that ends at a fixed boundary.
        for count in range(len(candidates), 0, -1):
            index = len(generated) + count - 1
            at_word_boundary = index + 1 < len(words) and words[index] is not None and words[index + 1] != words[index]
            if at_word_boundary or self._fixed(text, ends[index]):
                return candidates[:count]
        return []

    def _fixed(self, text: bytes, place: int) -> bool:
        """Whether no vocabulary token can straddle ``place``: no token starts with a non-empty
        end of ``text[:place]`` and goes on in a way ``text[place:]`` (then anything) allows."""
        right = text[place:]
        for start in range(max(0, place - self._longest + 1), place):
            left = text[start:place]
            at = bisect.bisect_right(self._pieces, left)  # pieces longer than `left` that start with it
            while at < len(self._pieces) and self._pieces[at].startswith(left):
                rest = self._pieces[at][len(left):]
                if rest.startswith(right) or right.startswith(rest):
                    return False
                at += 1
        return True


def forced_tokens(session: Any, tokenizer: Any, vocabulary: Any, generated: Sequence[int] = ()) -> List[int]:
    """The tokens the tokenizer would produce for ``session``'s forced text, up to the last
    fixed boundary (see the module's notes); ``generated`` is the tokens the session has
    committed. For repeated calls, build a :class:`TokenSplitter` once."""
    return TokenSplitter(tokenizer, vocabulary).forced_tokens(session, generated)


def _complete_utf8(data: bytes) -> bytes:
    """``data`` less a trailing incomplete UTF-8 sequence."""
    for back in range(1, min(4, len(data)) + 1):
        byte = data[-back]
        if byte & 0xC0 != 0x80:  # a lead byte or ASCII
            width = 1 if byte < 0x80 else 2 if byte >> 5 == 0b110 else 3 if byte >> 4 == 0b1110 else 4
            return data if width <= back else data[:-back]
    return data

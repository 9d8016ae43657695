"""Type stubs of the native module ``maskforge._native`` (re-exported by ``maskforge``)."""

import os
from typing import Any, Callable, Dict, Iterable, Literal, Mapping, Optional, Sequence, Tuple, Type, Union

__version__: str

BindPolicyName = Literal["eager", "lazy", "adaptive"]
TokenBytes = Union[bytes, bytearray, None]
EosTokenIds = Union[int, Sequence[int]]
# bytearray / memoryview / NumPy uint8, int32 or uint32 arrays (1-D, C-contiguous, writable),
# or a CPU torch int32 tensor.
MaskBuffer = Any
# JSON text, bytes of JSON text, a dict, a bool, or a Pydantic-compatible type (model, dataclass, TypedDict, ...).
SchemaInput = Union[str, bytes, bytearray, Dict[str, Any], bool, Type[Any]]

class Vocabulary:
    """A tokenizer vocabulary prepared for binding. Immutable; share one per tokenizer."""

    @staticmethod
    def from_id_ordered_tokens(
        token_bytes: Iterable[TokenBytes],
        eos_token_id: EosTokenIds,
        *,
        mask_vocab_size: Optional[int] = None,
    ) -> Vocabulary: ...
    @staticmethod
    def from_tokenizer_json(
        path: Union[str, os.PathLike[str]],
        *,
        mask_vocab_size: Optional[int] = None,
        eos_token_id: Optional[EosTokenIds] = None,
    ) -> Vocabulary: ...
    @staticmethod
    def from_tokenizer_json_str(
        text: str,
        *,
        mask_vocab_size: Optional[int] = None,
        eos_token_id: Optional[EosTokenIds] = None,
    ) -> Vocabulary: ...
    @property
    def tokenizer_size(self) -> int: ...
    @property
    def mask_vocab_size(self) -> int: ...
    @property
    def mask_word_count(self) -> int: ...
    @property
    def eos_token_ids(self) -> Tuple[int, ...]: ...
    def token_bytes(self, token_id: int) -> Optional[bytes]: ...

class Compiler:
    """Compiles JSON Schemas into programs, caching executables and class tries."""

    def __init__(
        self,
        *,
        executable_cache_bytes: int = 268435456,
        trie_cache_bytes: int = 268435456,
        bind_policy: BindPolicyName = "adaptive",
        default_draft: Optional[str] = None,
        format_assertion: bool = True,
        registry: Optional[Union[Mapping[str, SchemaInput], Callable[[str], Optional[SchemaInput]]]] = None,
        max_json_whitespace: Optional[int] = None,
        property_order: Literal["any", "declared"] = "any",
    ) -> None: ...
    @staticmethod
    def without_cache() -> Compiler: ...
    def compile(self, schema: SchemaInput) -> SchemaProgram: ...
    def cache_stats(self) -> Dict[str, int]: ...
    def clear_caches(self) -> None: ...
    @property
    def bind_policy(self) -> BindPolicyName: ...
    @property
    def default_draft(self) -> str: ...
    @property
    def format_assertion(self) -> bool: ...
    @property
    def max_json_whitespace(self) -> Optional[int]: ...
    @property
    def property_order(self) -> Literal["any", "declared"]: ...

class SchemaProgram:
    """A compiled schema, independent of any vocabulary."""

    @property
    def backend(self) -> Literal["regular", "structured"]: ...
    @property
    def state_count(self) -> int: ...
    def bind(self, vocabulary: Vocabulary, *, bind_policy: Optional[BindPolicyName] = None) -> BoundSchema: ...

class BoundSchema:
    """A program joined to a vocabulary; immutable and thread-safe."""

    def start_session(self) -> Session: ...
    @property
    def mask_word_count(self) -> int: ...
    @property
    def mask_byte_count(self) -> int: ...
    @property
    def mask_vocab_size(self) -> int: ...
    @property
    def bind_policy(self) -> Literal["eager", "lazy"]: ...
    @property
    def vocabulary(self) -> Vocabulary: ...

class Session:
    """The decoding position of one sequence."""

    def write_mask(self, buffer: MaskBuffer) -> None: ...
    def advance(self, token_id: int) -> None: ...
    def is_allowed(self, token_id: int) -> bool: ...
    def is_accepting(self) -> bool: ...
    def is_finished(self) -> bool: ...
    @property
    def mask_word_count(self) -> int: ...
    @property
    def mask_byte_count(self) -> int: ...

def fill_masks(sessions: Sequence[Session], buffer: MaskBuffer) -> None:
    """Writes ``sessions[i]``'s mask into row ``i`` of a ``[batch, words]`` (or flat) buffer, GIL released."""

def executable_cache_stats() -> Dict[str, int]: ...
def clear_executable_cache() -> None: ...
def process_cache_compiler(compiler: Compiler) -> Compiler: ...

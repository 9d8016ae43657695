"""Programs as bytes: ``SchemaProgram.to_bytes``, ``Compiler.load_program``,
``SchemaProgram.from_bytes`` and pickling. A loaded program writes the masks of the program
written, token for token on GPT-2, on every arm, also in another process; damaged bytes and
bytes of another version raise ``ProgramLoadError``."""

import json
import pickle
import struct
import zlib
from concurrent.futures import ProcessPoolExecutor

import pytest

import maskforge
from maskforge import templates as t

CASES = [
    ({"type": "object", "properties": {"name": {"type": "string", "maxLength": 8}}, "required": ["name"]}, '{"name": "Ada"}'),
    ({"type": "object", "properties": {"n": {"type": "integer", "minimum": 0}}, "required": ["n"]}, '{"n": 12, "x": [1.5]}'),
]


def programs(compiler):
    """(program, an accepted text, backend)."""
    made = [(compiler.compile(schema), text, None) for schema, text in CASES]
    made.append((compiler.compile_regex(r"[0-9]{3}-[a-z]+"), "123-abc", "regular"))
    made.append((compiler.compile_choice(["yes", "no"]), "no", "regular"))
    calls = t.tool_calls({"add": {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}})
    made.append((compiler.compile_template(calls), 'Sure. <tool_call>\n{"name": "add", "arguments": {"a": 2}}\n</tool_call>', "composite"))
    return made


def masks_along(program, vocabulary, text):
    bound = program.bind(vocabulary)
    session = bound.start_session()
    data, seen = text.encode(), []
    while True:
        mask = bytearray(bound.mask_byte_count)
        session.write_mask(mask)
        seen.append(bytes(mask))
        if not data:
            return seen
        ids = [i for i in range(bound.mask_vocab_size) if mask[i // 8] >> (i % 8) & 1]
        token = max((i for i in ids if data.startswith(vocabulary.token_bytes(i) or b"\xff\xff")), key=lambda i: len(vocabulary.token_bytes(i)))
        session.advance(token)
        data = data[len(vocabulary.token_bytes(token)):]


def test_loaded_and_unpickled_programs_write_the_same_masks(gpt2_vocabulary):
    compiler = maskforge.Compiler(max_json_whitespace=1)
    backends = set()
    for program, text, _ in programs(compiler):
        backends.add(program.backend)
        data = program.to_bytes()
        expected = masks_along(program, gpt2_vocabulary, text)
        for loaded in (maskforge.Compiler().load_program(data), maskforge.SchemaProgram.from_bytes(bytearray(data)), pickle.loads(pickle.dumps(program))):
            assert (loaded.backend, loaded.output, loaded.state_count) == (program.backend, program.output, program.state_count)
            assert masks_along(loaded, gpt2_vocabulary, text) == expected
    assert backends == {"regular", "structured", "composite"}


def _masks_in_worker(data, tokenizer_path, text):
    vocabulary = maskforge.Vocabulary.from_tokenizer_json(tokenizer_path)
    return masks_along(pickle.loads(data), vocabulary, text)


def test_a_program_compiled_in_one_process_serves_another(gpt2_vocabulary, gpt2_tokenizer_path):
    compiler = maskforge.Compiler()
    with ProcessPoolExecutor(1) as pool:
        for program, text, _ in programs(compiler):
            remote = pool.submit(_masks_in_worker, pickle.dumps(program), str(gpt2_tokenizer_path), text).result()
            assert remote == masks_along(program, gpt2_vocabulary, text)


def _reason(data):
    with pytest.raises(maskforge.ProgramLoadError) as caught:
        maskforge.SchemaProgram.from_bytes(data)
    return caught.value.reason


def _rewrite_header(data, edit):
    (length,) = struct.unpack_from("<I", data, 16)
    header = json.loads(data[20 : 20 + length])
    edit(header)
    encoded = json.dumps(header).encode()
    rest = struct.pack("<I", len(encoded)) + encoded + data[20 + length :]
    return data[:12] + struct.pack("<I", zlib.crc32(rest)) + rest


def test_damaged_foreign_and_other_bytes_raise_program_load_error():
    for program, _, _ in programs(maskforge.Compiler()):
        data = program.to_bytes()
        for at in range(0, len(data), max(1, len(data) // 64)):
            assert _reason(data[:at]) in {"not_a_program", "damaged"}
            flipped = bytearray(data)
            flipped[at] ^= 0x01
            assert _reason(bytes(flipped)) in {"not_a_program", "version", "damaged"}
        assert maskforge.SchemaProgram.from_bytes(_rewrite_header(data, lambda h: None)).backend == program.backend
        assert _reason(_rewrite_header(data, lambda h: h.update(maskforge="0.0.1"))) == "version"
    assert _reason(b'{"type": "object"}') == "not_a_program"
    with pytest.raises(maskforge.ArgumentTypeError):
        maskforge.SchemaProgram.from_bytes("not bytes")
    error = pickle.loads(pickle.dumps(maskforge.ProgramLoadError("x", reason="version")))
    assert error.reason == "version"


def test_bytes_name_the_version_that_wrote_them():
    data = maskforge.Compiler().compile({"type": "boolean"}).to_bytes()
    (length,) = struct.unpack_from("<I", data, 16)
    assert json.loads(data[20 : 20 + length])["maskforge"] == maskforge.__version__

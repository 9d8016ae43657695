"""The public surface: exports, stubs matching the native classes, GIL-free concurrency basics."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

import maskforge
from maskforge import _native

STUB = Path(maskforge.__file__).with_name("_native.pyi")


def _stub_classes() -> dict:
    tree = ast.parse(STUB.read_text(encoding="utf-8"))
    classes = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            classes[node.name] = {
                item.name for item in node.body if isinstance(item, ast.FunctionDef) and not item.name.startswith("_")
            }
    return classes


def test_stub_classes_match_native():
    stub = _stub_classes()
    native = {name for name, value in vars(_native).items() if inspect.isclass(value)}
    assert set(stub) == native
    for name, members in stub.items():
        runtime = {m for m in dir(getattr(_native, name)) if not m.startswith("_")}
        assert members == runtime, name


def test_stub_functions_match_native():
    tree = ast.parse(STUB.read_text(encoding="utf-8"))
    stub = {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}
    native = {name for name, value in vars(_native).items() if callable(value) and not inspect.isclass(value)}
    native = {name for name in native if not name.startswith("_")}
    assert stub == native


def test_public_exports():
    for name in maskforge.__all__:
        assert hasattr(maskforge, name), name
    assert maskforge.__version__ == "0.1.0"
    assert (Path(maskforge.__file__).parent / "py.typed").is_file()


@pytest.mark.parametrize("cls", [maskforge.Vocabulary, maskforge.SchemaProgram, maskforge.BoundSchema, maskforge.Session])
def test_native_classes_cannot_be_built_directly(cls):
    with pytest.raises(TypeError):
        cls()

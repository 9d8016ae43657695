"""``python -m maskforge``: demo, check, help."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib import resources

import pytest

import maskforge
from maskforge.__main__ import main


def test_package_data_is_installed():
    data = resources.files("maskforge") / "data"
    assert (data / "gpt2.tokenizer.json").is_file()
    schema = json.loads((data / "demo.schema.json").read_text(encoding="utf-8"))
    assert schema["additionalProperties"] is False
    assert set(schema["required"]) == set(schema["properties"])
    instance = json.loads((data / "demo.instance.json").read_text(encoding="utf-8"))
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.validate(instance, schema)


def test_demo_runs_as_module():
    result = subprocess.run(
        [sys.executable, "-m", "maskforge", "demo"], capture_output=True, text=True, timeout=300, check=False
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    schema = (resources.files("maskforge") / "data" / "demo.schema.json").read_text(encoding="utf-8")
    backend = maskforge.Compiler().compile(schema).backend
    assert f"backend: {backend}" in [line.split(",")[0] for line in lines]
    steps = [line for line in lines if line[:4].strip().isdigit()]
    assert len(steps) > 10
    assert "EOS allowed: True" in result.stdout
    assert "session finished: True" in result.stdout


def test_help():
    result = subprocess.run(
        [sys.executable, "-m", "maskforge", "--help"], capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 0
    assert "demo" in result.stdout and "check" in result.stdout


def test_check_ok(tmp_path, capsys, gpt2_tokenizer_path):
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps({"enum": ["a", "b"]}))
    assert main(["check", str(schema)]) == 0
    out = capsys.readouterr().out
    assert "backend: regular" in out
    assert "states: " in out
    assert out.rstrip().endswith("ok")
    assert main(["check", str(schema), "--tokenizer", str(gpt2_tokenizer_path)]) == 0
    out = capsys.readouterr().out
    assert "mask of 1571 words" in out and out.rstrip().endswith("ok")


def test_check_diagnostic(tmp_path, capsys):
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps({"$ref": "#/$defs/missing"}))
    assert main(["check", str(schema)]) == 1
    out = capsys.readouterr().out
    assert "error: MF-E005" in out
    assert "keyword: $ref" in out
    assert "pointer: /$ref" in out
    assert "message: " in out


def test_check_invalid_json(tmp_path, capsys):
    schema = tmp_path / "schema.json"
    schema.write_text("{")
    assert main(["check", str(schema)]) == 1
    assert "error: MF-E001" in capsys.readouterr().out


def test_check_missing_file(tmp_path, capsys):
    assert main(["check", str(tmp_path / "nope.json")]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_check_bad_draft(tmp_path, capsys):
    schema = tmp_path / "schema.json"
    schema.write_text("{}")
    assert main(["check", str(schema), "--default-draft", "draft1"]) == 1
    assert "draft1" in capsys.readouterr().err

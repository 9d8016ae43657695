"""The Python examples run offline, as a user runs them, on the vendored stories260K model."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("pydantic")

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "python"


def run_example(name: str) -> str:
    env = {k: v for k, v in os.environ.items() if k != "MASKFORGE_MODEL_ID"}
    env["HF_HUB_OFFLINE"] = "1"
    done = subprocess.run([sys.executable, str(EXAMPLES / name)], cwd=EXAMPLES.parent.parent, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def test_quickstart():
    assert run_example("quickstart.py").startswith("Profile(")


def test_payment_instruction_showcase():
    # The example asserts every constraint itself; its output is the instance.
    value = json.loads(run_example("payment_instruction_showcase.py"))
    assert value["kind"] == "payment_instruction" and "compliance" in value["approvals"]


def test_external_refs():
    out = run_example("external_refs.py")
    assert "'home'" in out and "unresolved, as expected: MF-E005" in out


def test_batched_sessions():
    out = run_example("batched_sessions.py")
    left = [line for line in out.splitlines() if " - " in line]
    assert len(left) == 5
    for line in left:
        assert set(json.loads(line.split(" -> ", 1)[1])) == {"mood", "ending"}


def test_serving_adapter():
    # The example checks that per-request and per-batch processors decode alike.
    answers = [line.split(": ", 1)[1] for line in run_example("serving_adapter.py").splitlines() if line.startswith("r")]
    assert len(answers) == 5
    for answer in answers:
        assert set(json.loads(answer)) == {"name", "mood", "likes"}

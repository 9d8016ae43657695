"""Smoke test of integration/end_to_end.py on the vendored stories260K model: a few tokens, one
timed pair per schema. Checks the report's shape and that completed outputs validate; the
timings themselves are not asserted."""

from __future__ import annotations

import json
import math

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")
jsonschema = pytest.importorskip("jsonschema")

from conftest import DATA_DIR, load_integration_script  # noqa: E402  (after the skips)

end_to_end = load_integration_script("end_to_end")


def test_report_is_sane(tmp_path):
    out = tmp_path / "report.json"
    # 64 tokens is enough for stories260K to complete these two schemas (one per arm).
    schemas = ["object", "anyof-pattern"]
    code = end_to_end.main(["--model", str(DATA_DIR / "models" / "stories260K"), "--max-new-tokens", "64",
                            "--repeats", "1", "--warmup", "0", "--schemas", *schemas, "--json", str(out)])
    assert code == 0
    report = json.loads(out.read_text())
    assert report["settings"]["threads"] == 1
    results = report["results"]
    assert [row["schema"] for row in results] == schemas
    for row in results:
        assert 0 < row["generated_tokens"] <= 64
        assert math.isfinite(row["ratio"]) and row["ratio"] > 0
        for key in ("constrained_tokens_per_s", "unconstrained_tokens_per_s"):
            assert math.isfinite(row[key]) and row[key] > 0
        for key in ("constrained_step_ms", "unconstrained_step_ms", "processor_call_ms"):
            assert 0 < row[key]["p50"] <= row[key]["p99"]
        assert 0 < row["processor_share"] < 1
        assert row["backend"] in ("regular", "structured")
        assert row["complete"], row["output"]
        jsonschema.validate(json.loads(row["output"]), end_to_end.SCHEMAS[row["schema"]])
    assert {row["backend"] for row in results} == {"regular", "structured"}

"""The cross-engine benchmark's harness, on MaskForge alone and a two-schema catalog.

Peers are optional benchmark dependencies; this checks the harness itself: instances are read
token by token with EOS at the end, outcomes are judged against their labels, runs resume, and
the report reads the results back.
"""

import json

import pytest

pytest.importorskip("tokenizers")

from conftest import TOKENIZERS_DIR, load_integration_script  # noqa: E402

cross_engine = load_integration_script("cross_engine")

SCHEMAS = {
    "point": {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]},
    "tags": {"type": "array", "items": {"enum": ["a", "b"]}, "uniqueItems": True},
}
INSTANCES = {
    "point": {"positive": [{"x": 1, "y": "z"}], "negative": [{"x": 1.5}, {"y": 1}]},
    "tags": {"positive": [["a", "b"], []], "negative": [["a", "a"]]},
}


@pytest.fixture
def catalog(tmp_path):
    store = tmp_path / "schemastore"
    (store / "schemas").mkdir(parents=True)
    manifest = {}
    for name, schema in SCHEMAS.items():
        (store / "schemas" / f"{name}.json").write_text(json.dumps(schema))
        entry = {"schema": f"schemas/{name}.json", "positive": [], "negative": []}
        for label, values in INSTANCES[name].items():
            for index, value in enumerate(values):
                relative = f"instances/{name}-{label}-{index}.json"
                (store / relative).parent.mkdir(exist_ok=True)
                (store / relative).write_text(json.dumps(value))
                entry[label].append({"json": relative})
        manifest[name] = entry
    (store / "manifest.json").write_text(json.dumps(manifest))
    return tmp_path


def test_maskforge_judges_every_instance_and_runs_resume(catalog, tmp_path, capsys):
    out = tmp_path / "results.jsonl"
    args = ["run", "--out", str(out), "--engines", "maskforge", "--schemas", str(catalog),
            "--tokenizer", str(TOKENIZERS_DIR / "gpt2.tokenizer.json"), "--timeout", "120"]
    assert cross_engine.main(args) == 0
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert {r["schema"] for r in records} == {"schemas/point.json", "schemas/tags.json"}
    for record in records:
        assert record["status"] == "compiled" and record["mask_s"]
        assert [i["outcome"] for i in record["instances"]] == ["correct"] * len(record["instances"])
        refused = [i for i in record["instances"] if i["label"] == "negative"]
        assert refused and all("refused_at" in i for i in refused)
    assert cross_engine.main(args) == 0  # resumed: nothing left to run
    assert len(out.read_text().splitlines()) == 2
    assert cross_engine.main(["report", str(out)]) == 0
    report = capsys.readouterr().out
    assert "maskforge" in report and "3/3" in report

"""The cross-engine benchmark's harness, on MaskForge alone and tiny corpora.

Peers are optional benchmark dependencies; this checks the harness itself: instances are read
token by token with EOS at the end, outcomes are judged against their labels, runs resume, a
results file keeps one tokenizer, workers past the memory limit are stopped, the report reads
the results back, and JSONSchemaBench instances are generated (when hypothesis-jsonschema is
installed), checked by the validator and cached.
"""

import json
import multiprocessing
import time

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
    assert "tokenizer: gpt2" in report
    assert all(r["tokenizer"] == "gpt2" and r["eos"] == 50256 and r["corpus"] == "schemastore" for r in records)


def test_a_results_file_holds_one_tokenizer(catalog, tmp_path):
    out = tmp_path / "results.jsonl"
    common = ["run", "--out", str(out), "--engines", "maskforge", "--schemas", str(catalog), "--limit", "1"]
    assert cross_engine.main(common + ["--tokenizer", str(TOKENIZERS_DIR / "gpt2.tokenizer.json")]) == 0
    with pytest.raises(SystemExit, match="holds results for"):
        cross_engine.main(common + ["--tokenizer", str(TOKENIZERS_DIR / "mistral-v3.tokenizer.json")])


def test_eos_is_found_by_name(tmp_path):
    from tokenizers import Tokenizer

    assert cross_engine.find_eos(Tokenizer.from_file(str(TOKENIZERS_DIR / "gpt2.tokenizer.json"))) == 50256
    assert cross_engine.find_eos(Tokenizer.from_file(str(TOKENIZERS_DIR / "mistral-v3.tokenizer.json"))) == 2
    assert cross_engine.tokenizer_name(TOKENIZERS_DIR / "qwen2.5.tokenizer.json") == "qwen2.5"


def _hold_memory(megabytes, results):
    held = bytearray(megabytes << 20)  # zero-filled, so every page is resident
    results.put({"held": len(held)})
    time.sleep(60)


def test_a_worker_past_the_memory_limit_is_stopped():
    context = multiprocessing.get_context("fork")
    results = context.Queue()
    process = context.Process(target=_hold_memory, args=(300, results), daemon=True)
    process.start()
    try:
        assert cross_engine.wait_for_result(process, results, 30, memory_limit_mb=2000)[0] == {"held": 300 << 20}
        assert cross_engine.wait_for_result(process, results, 30, memory_limit_mb=100) == (None, "memory")
    finally:
        process.kill()
        process.join()
    assert cross_engine.wait_for_result(process, results, 30) == (None, "crash")


def _report_of(tmp_path, capsys, records, *options):
    results = tmp_path / "results.jsonl"
    results.write_text("".join(json.dumps(r) + "\n" for r in records))
    assert cross_engine.main(["report", str(results), *options]) == 0
    return capsys.readouterr().out


def test_report_gives_maskforge_alone_its_own_mask_times(tmp_path, capsys):
    def record(engine, schema, status, masks=()):
        fields = {"engine": engine, "schema": schema, "status": status, "tokenizer": "gpt2", "eos": 50256,
                  "corpus": "schemastore", "instances": []}
        if status == "compiled":
            fields.update(ttfm_s=0.01, mask_s=list(masks), max_rss_kb=2048,
                          instances=[{"label": "positive", "outcome": "correct", "tokens": len(masks) - 1}])
        return fields

    records = [record("maskforge", "shared", "compiled", [1e-6] * 4),
               record("xgrammar", "shared", "compiled", [2e-6] * 4),
               record("maskforge", "ours", "compiled", [10e-6, 20e-6, 30e-6, 40e-6]),
               record("xgrammar", "ours", "error"),
               record("xgrammar", "big", "memory")]
    report = _report_of(tmp_path, capsys, records, "--markdown")
    assert "tokenizer: gpt2; corpus: schemastore" in report
    assert "schemas only MaskForge compiles: 1" in report
    # maskforge alone on "ours": p50 30, p99 40, max 40, mean 25 µs over 4 masks
    assert "| maskforge | 1 | 1 | 1/1 | 10.0 | 10.0 | 10.0 | 30.0 | 40.0 | 40.0 | 25.0 | 4 |" in report
    assert "| xgrammar | 3 | 1 | 1 | 0 | 0 | 1 |" in report  # compiled, errors, timeouts, crashes, memory


def test_mutations_reach_deep_nodes_first():
    value = {"a": {"b": 1, "c": "x"}, "d": [True]}
    found = cross_engine.mutations(value)
    assert set(found) == set(cross_engine.MUTATION_KINDS)
    assert found["drop-key"][0] == ("/a/b", {"a": {"c": "x"}, "d": [True]})
    assert found["wrong-type"][0] == ("/a/b", {"a": {"b": "1", "c": "x"}, "d": [True]})
    assert found["wrong-type"][-1] == ("/", [])
    assert ("/a", {"a": {"b": 1, "c": "x", "x-unlisted-key": 0}, "d": [True]}) in found["extra-key"]
    assert ("/a/c", {"a": {"b": 1, "c": ""}, "d": [True]}) in found["off-enum-or-range"]
    assert value == {"a": {"b": 1, "c": "x"}, "d": [True]}  # the valid instance itself is left alone
    assert cross_engine.spread(list(range(10)), 3) == [0, 4, 9]
    assert list(cross_engine.interleaved([[1, 2, 3], [4], [5, 6]])) == [1, 4, 5, 2, 6, 3]


def test_patterns_are_read_with_ascii_classes():
    schema = {"properties": {"pattern": {"type": "string", "pattern": "^\\d+$"}},
              "patternProperties": {"^\\w$": {"enum": [{"pattern": "data"}]}}, "anyOf": [{"pattern": "x"}]}
    assert cross_engine.ascii_patterns(schema) == {
        "properties": {"pattern": {"type": "string", "pattern": "(?a)^\\d+$"}},
        "patternProperties": {"(?a)^\\w$": {"enum": [{"pattern": "data"}]}}, "anyOf": [{"pattern": "(?a)x"}]}


BENCH_SCHEMAS = {
    "Github_easy": {
        "point.json": {"type": "object", "properties": {"x": {"type": "integer", "minimum": 0},
                                                        "kind": {"enum": ["a", "b"]}},
                       "required": ["x", "kind"], "additionalProperties": False},
        "never.json": {"type": "integer", "minimum": 5, "maximum": 1},
    },
    "Kubernetes": {"names.json": {"type": "array", "items": {"type": "string", "maxLength": 3}, "maxItems": 3}},
}


@pytest.fixture
def bench(tmp_path):
    for subset, schemas in BENCH_SCHEMAS.items():
        folder = tmp_path / "jsonschemabench" / subset
        folder.mkdir(parents=True)
        for name, schema in schemas.items():
            (folder / name).write_text(json.dumps(schema))
    return tmp_path


@pytest.fixture
def generator():
    pytest.importorskip("hypothesis_jsonschema")
    pytest.importorskip("jsonschema")
    try:
        cross_engine.draw_examples({"type": "object"}, 0, 1)
    except Exception as error:  # noqa: BLE001
        pytest.skip(f"hypothesis-jsonschema does not draw with this Hypothesis: {error}")


def test_generated_instances_are_checked_and_reproducible(generator):
    import jsonschema

    schema = BENCH_SCHEMAS["Github_easy"]["point.json"]
    entry = cross_engine.generate_instances(schema, 0, 3, 3)
    assert entry == cross_engine.generate_instances(schema, 0, 3, 3)
    assert entry["status"] == "ok" and 1 <= len(entry["positive"]) <= 3 and len(entry["negative"]) == 3
    validator = jsonschema.Draft202012Validator(schema)
    assert all(validator.is_valid(value) for value in entry["positive"])
    assert not any(validator.is_valid(item["value"]) for item in entry["negative"])


def test_generated_strings_read_digit_classes_as_ecma_262_does(generator):
    # Python's \d also matches "٣"; JSON Schema's (ECMA-262) matches only 0-9.
    entry = cross_engine.generate_instances({"type": "string", "pattern": "^\\d{1,3}$"}, 0, 5, 0)
    assert entry["status"] == "ok" and entry["positive"]
    assert all(value.isascii() and value.isdigit() for value in entry["positive"])


def test_jsonschemabench_run_uses_its_instances_cache(bench, tmp_path, generator, capsys, monkeypatch):
    out, cache = tmp_path / "bench.jsonl", tmp_path / "instances.json"
    args = ["run", "--corpus", "jsonschemabench", "--sample", "2", "--seed", "0", "--out", str(out),
            "--instances-cache", str(cache), "--engines", "maskforge", "--schemas", str(bench),
            "--tokenizer", str(TOKENIZERS_DIR / "gpt2.tokenizer.json"), "--generation-timeout", "60"]
    assert cross_engine.main(args) == 0
    entries = json.loads(cache.read_text())["schemas"]
    assert set(entries) == {"Github_easy/point.json", "Github_easy/never.json", "Kubernetes/names.json"}
    assert entries["Github_easy/never.json"]["status"] == "no instances"
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert {r["schema"] for r in records} == {"Github_easy/point.json", "Kubernetes/names.json"}
    for record in records:
        assert record["corpus"] == "jsonschemabench" and record["status"] == "compiled"
        assert [i["outcome"] for i in record["instances"]] == ["correct"] * len(record["instances"])
        assert all("mutation" in i for i in record["instances"] if i["label"] == "negative")
    # a second run with a fresh results file reads the cache and generates nothing
    monkeypatch.setattr(cross_engine, "check_generator", lambda: pytest.fail("generated again"))
    before = cache.read_text()
    args[args.index(str(out))] = str(tmp_path / "again.jsonl")
    assert cross_engine.main(args) == 0
    assert cache.read_text() == before
    assert (tmp_path / "again.jsonl").read_text().count("\n") == 2
    assert cross_engine.main(["report", str(out), "--instances-cache", str(cache)]) == 0
    assert "3 schemas, 2 with instances" in capsys.readouterr().out


def test_generation_past_its_time_limit_leaves_the_schema_out(bench, tmp_path, monkeypatch):
    # a generator that never finishes (the forked generator process inherits these patches)
    monkeypatch.setattr(cross_engine, "check_generator", lambda: None)
    monkeypatch.setattr(cross_engine, "generate_instances", lambda *args: time.sleep(60))
    out, cache = tmp_path / "bench.jsonl", tmp_path / "instances.json"
    assert cross_engine.main(["run", "--corpus", "jsonschemabench", "--match", "Kubernetes", "--out", str(out),
                              "--instances-cache", str(cache), "--engines", "maskforge", "--schemas", str(bench),
                              "--tokenizer", str(TOKENIZERS_DIR / "gpt2.tokenizer.json"),
                              "--generation-timeout", "0.5"]) == 0
    entries = json.loads(cache.read_text())["schemas"]
    assert entries == {"Kubernetes/names.json": {"status": "no instances", "reason": "over 0.5 s"}}
    assert out.read_text() == ""

"""Generated schemas, mask-guided walks and a two-way differential against python-jsonschema.

integration/liveness.py holds the generator and the checks; this runs it with fixed seeds.
Every walk must stay live (no empty mask before EOS) and end in an instance the validator
accepts; every generated value must be admitted exactly when the validator says it is valid.
"""

import pytest

pytest.importorskip("maskforge")
pytest.importorskip("jsonschema")

from conftest import load_integration_script  # noqa: E402  (after the skips)

# The keywords whose semantics are not local: the generator must exercise each of them.
NON_LOCAL_KEYWORDS = (
    "not",
    "if",
    "oneOf",
    "unevaluatedProperties",
    "unevaluatedItems",
    "contains",
    "maxContains",
    "dependentSchemas",
    "propertyNames",
    "patternProperties",
    "uniqueItems",
)


liveness = load_integration_script("liveness")


@pytest.mark.parametrize("seed", [0, 1])
def test_generated_schemas_stay_live_and_exact(seed):
    report = liveness.run(seed, schemas=120, walks=6, values=25)
    missing = [k for k in NON_LOCAL_KEYWORDS if report["keywords"][k] == 0]
    assert not missing, f"the generator produced none of {missing}"
    # Most generated schemas compile; the rest are diagnosed (unsatisfiable ones included).
    assert report["compiled"] >= report["schemas"] * 0.6, report
    assert report["walks"]["done"] > 0 and report["values"]["valid"] > 0 and report["values"]["invalid"] > 0
    assert not report["failures"], report["failures"][:5]

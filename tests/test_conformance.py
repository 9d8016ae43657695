"""Official JSON-Schema-Test-Suite, token by token, per draft.

Schemas the compiler rejects with a diagnostic are coverage gaps and tolerated;
among compiled schemas every instance must be admitted exactly when valid. Pass
counts may only go up: tests/conformance_floors.json holds the ratchet.
"""

import json
import os
from pathlib import Path

import pytest

pytest.importorskip("maskforge")

from conftest import load_integration_script  # noqa: E402  (after the skip)

REPO_ROOT = Path(__file__).resolve().parent.parent
FLOORS = json.loads((REPO_ROOT / "tests" / "conformance_floors.json").read_text(encoding="utf-8"))
# Failing tests quoted in an assertion message; the rest are counted.
SHOWN_FAILURES = 40


runner = load_integration_script("conformance")
_reports: dict = {}


def _jobs() -> int:
    """Worker processes: MASKFORGE_CONFORMANCE_JOBS, else up to two cores."""
    return int(os.environ.get("MASKFORGE_CONFORMANCE_JOBS", min(2, os.cpu_count() or 1)))


def _case_timeout() -> float:
    """Seconds before a case fails as too slow; the slowest healthy cases take a few seconds."""
    return float(os.environ.get("MASKFORGE_CONFORMANCE_CASE_TIMEOUT", 20))


def _report(draft: str) -> dict:
    """The draft's report, computed once and shared by the tests below."""
    if draft not in _reports:
        _reports[draft] = runner.run_suite(drafts=(draft,), jobs=_jobs(), case_timeout=_case_timeout())
    return _reports[draft]


def _describe(failure: dict) -> str:
    return (
        f"{failure['outcome']}: {failure['file']} #{failure['case']} {failure['description']!r} / "
        f"{failure['test']!r}: {failure['detail']}\n    schema {failure['schema']}\n    instance {failure['instance']}"
    )


@pytest.mark.parametrize("draft", runner.DRAFTS)
def test_compiled_schemas_admit_exactly_the_valid_instances(draft):
    failures = _report(draft)["failures"]
    shown = "\n".join(_describe(failure) for failure in failures[:SHOWN_FAILURES])
    more = f"\n... and {len(failures) - SHOWN_FAILURES} more" if len(failures) > SHOWN_FAILURES else ""
    if failures:
        pytest.fail(f"{len(failures)} failing tests in {draft}:\n{shown}{more}", pytrace=False)


@pytest.mark.parametrize("draft", runner.DRAFTS)
def test_pass_counts_reach_their_floors(draft):
    sections = _report(draft)["drafts"][draft]["sections"]
    below = {
        section: (sections[section]["pass"], floor)
        for section, floor in FLOORS[draft].items()
        if sections[section]["pass"] < floor
    }
    assert not below, f"{draft} pass counts below the floors in tests/conformance_floors.json (passed, floor): {below}"

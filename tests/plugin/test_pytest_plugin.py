"""The pytest plugin as an engine author's CI meets it: a pytest subprocess that finds memeval
through its `pytest11` entry point, in a folder holding no test of its own."""

from __future__ import annotations

import pytest

from memeval.suites.catalog import resolve

# Here rather than in a conftest: pytest refuses `pytest_plugins` in a conftest below the root.
pytest_plugins = ["pytester"]

HALF_RIGHT = """\
kind: fixture
dimension: multihop
name: half_right
tests: two_hop
title: One check an engine that remembers passes, and one nobody can
assertions:
  - id: a1
    text: The Leeds office parking allowance is 40 pounds a month.
    subject: Leeds office
    predicate: parking_allowance
    object: 40 pounds
    source: hr-handbook
    trust: system
    recorded_at: 2025-01-20T00:00:00Z
queries:
  - text: What is the parking allowance at the Leeds office?
    checks:
      - contains: 40 pounds
  - text: What is the parking allowance at the Leeds office?
    checks:
      - contains: 90 pounds
"""
"""Scores 0.5 on an engine that stores and finds what it is told, such as the reference."""

ENGINES = """\
from memeval.engines import EngineUnavailable
from memeval.engines.reference import ReferenceEngine


class MyEngine(ReferenceEngine):
    name = "mine"


class Down(ReferenceEngine):
    name = "down"

    async def store(self, tenant, assertion):
        raise EngineUnavailable("connection refused by 127.0.0.1:9")


class Crashes(ReferenceEngine):
    name = "crashes"

    async def store(self, tenant, assertion):
        raise RuntimeError("a bug in the engine")


class NoKey(ReferenceEngine):
    name = "nokey"

    async def preflight(self):
        raise EngineUnavailable("401 from 127.0.0.1:9")
"""


UNNEEDED = ("hypothesispytest", "schemathesis", "anyio", "xdist")
QUIET = [arg for name in UNNEEDED for arg in ("-p", f"no:{name}")]
"""Plugins the subprocess need not load: 3 of its 4 seconds of start-up are Hypothesis'."""


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    """pytest in a subprocess, finding memeval by its entry point as an installed plugin."""
    return pytester.runpytest_subprocess(*QUIET, *args)


def outcome_ids(result: pytest.RunResult, outcome: str) -> set[str]:
    """Node ids of a `-v` run's items with this outcome."""
    return {line.split()[0] for line in result.outlines if line.split()[1:2] == [outcome]}


def test_reference_passes_one_item_per_dimension_fixture(pytester: pytest.Pytester) -> None:
    result = run(
        pytester,
        "-v",
        "--memeval-engine",
        "reference",
        "--memeval-suite",
        "dimensions",
        "--memeval-fail-under",
        "0.8",
    )
    fixtures = resolve("dimensions").fixtures
    assert result.ret == pytest.ExitCode.OK
    result.assert_outcomes(passed=len(fixtures) + 1)
    expected = {f"memeval::{f.id}" for f in fixtures} | {"memeval::composite"}
    assert outcome_ids(result, "PASSED") == expected
    result.stdout.fnmatch_lines(
        [
            f"*collected {len(fixtures) + 1} items",
            f"memeval: reference on dimensions: composite * over {len(fixtures)} of "
            f"{len(fixtures)} cases (--memeval-fail-under 80.0%)",
        ]
    )


def test_naive_fails_with_the_failed_checks_as_the_message(pytester: pytest.Pytester) -> None:
    result = run(pytester, "--memeval-engine", "naive", "--memeval-suite", "dimensions")
    fixtures = resolve("dimensions").fixtures
    outcomes = result.parseoutcomes()
    assert outcomes.get("passed", 0) + outcomes["failed"] == len(fixtures)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    # The naive engine lacks `abstain`: the abstention fixture fails on it, said per check.
    result.stdout.fnmatch_lines(
        [
            "*_ memeval case dimensions/abstention/never_stored_parking _*",
            "naive: 3 missed (score 0.00; any miss fails without --memeval-fail-under)",
            "query 0: What is the monthly parking allowance for staff at the Leeds office?",
            "  unsupported — abstain: True (engine lacks `abstain`)",
            "  failed — not_contains: MacBook (first hit: *)",
            "  failed — not_contains: ThinkPad (first hit: *)",
            "  got:",
            "    - Laptop LT-1044, a ThinkPad X1 Carbon, is assigned to Mei Lin.",
        ]
    )
    result.stdout.fnmatch_lines(["FAILED memeval::dimensions/abstention/never_stored_parking - *"])
    assert "Traceback" not in result.stdout.str()
    assert "def runtest" not in result.stdout.str()


def test_fail_under_judges_each_case_by_its_score_and_gates_the_composite(
    pytester: pytest.Pytester,
) -> None:
    pytester.makefile(".yaml", half_right=HALF_RIGHT)
    args = ("-v", "--memeval-engine", "reference", "--memeval-suite", "half_right.yaml")
    case = "memeval::dimensions/multihop/half_right"

    strict = run(pytester, *args)
    assert outcome_ids(strict, "FAILED") == {case}  # no threshold: the one miss fails it
    strict.stdout.fnmatch_lines(
        [
            "reference: 1 missed (score 0.50; *)",
            "query 1: What is the parking allowance at the Leeds office?",
            "  failed — contains: 90 pounds (first hit: 'The Leeds office parking*)",
            "  got:",
            "    - The Leeds office parking allowance is 40 pounds a month.",
        ]
    )

    lenient = run(pytester, *args, "--memeval-fail-under", "0.5")
    assert outcome_ids(lenient, "PASSED") == {case, "memeval::composite"}
    assert lenient.ret == pytest.ExitCode.OK

    above = run(pytester, *args, "--memeval-fail-under", "0.6")
    assert outcome_ids(above, "FAILED") == {case, "memeval::composite"}
    above.stdout.fnmatch_lines(
        [
            "reference: score 0.50 is below --memeval-fail-under 0.60 (1 missed)",
            "composite 50.0% is below --memeval-fail-under 60.0%",
        ]
    )


def test_an_engine_class_from_the_authors_own_module(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(my_engine=ENGINES)
    only = ("--memeval-only", "never_stored_parking", "--memeval-only", "plan_as_of_date")
    result = run(pytester, "--memeval-engine", "my_engine:MyEngine", *only)
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(
        ["memeval: my_engine:MyEngine on all: composite * over 2 of 2 cases"]
    )


def test_an_unreachable_engine_is_an_error_not_a_failure(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(my_engine=ENGINES)
    only = ("--memeval-only", "never_stored_parking", "--memeval-only", "plan_as_of_date")
    result = run(pytester, "--memeval-engine", "my_engine:Down", *only)
    result.assert_outcomes(errors=2)
    result.stdout.fnmatch_lines(
        [
            "my_engine:Down could not run dimensions/abstention/never_stored_parking: "
            "EngineUnavailable: connection refused by 127.0.0.1:9",
        ]
    )
    assert "Traceback" not in result.stdout.str()


def test_a_crashing_engine_or_a_failed_preflight_errors_its_cases_as_memeval_run_would(
    pytester: pytest.Pytester,
) -> None:
    """The crash is the case's error result (the one failure policy, as `memeval run` stores
    it); a failed preflight is the check `memeval run` makes, and ends every case alike."""
    pytester.makepyfile(my_engine=ENGINES)
    only = ("--memeval-only", "never_stored_parking", "--memeval-only", "plan_as_of_date")
    crashed = run(pytester, "--memeval-engine", "my_engine:Crashes", *only)
    crashed.assert_outcomes(errors=2)
    crashed.stdout.fnmatch_lines(
        [
            "my_engine:Crashes could not run dimensions/abstention/never_stored_parking: "
            "case error: RuntimeError: a bug in the engine",
        ]
    )
    refused = run(pytester, "--memeval-engine", "my_engine:NoKey", *only)
    refused.assert_outcomes(errors=2)
    refused.stdout.fnmatch_lines(
        [
            "my_engine:NoKey could not run dimensions/abstention/never_stored_parking: "
            "engine `my_engine:NoKey` cannot be reached: 401 from 127.0.0.1:9*",
        ]
    )
    for result in (crashed, refused):
        assert "Traceback" not in result.stdout.str()


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (
            ["--memeval-engine", "nope"],
            ["ERROR: --memeval-engine nope: unknown engine `nope`", "  fix: use one of: *"],
        ),
        (
            ["--memeval-engine", "no_such_module:Engine"],
            ["ERROR: --memeval-engine no_such_module:Engine: *cannot import `no_such_module`*"],
        ),
        (
            ["--memeval-engine", "reference", "--memeval-suite", "nosuch"],
            ["ERROR: --memeval-suite nosuch: unknown suite `nosuch`", "  fix: use lifecycle, *"],
        ),
        (
            ["--memeval-engine", "reference", "--memeval-only", "no_such_case"],
            ["ERROR: --memeval-only no_such_case: no case matches *"],
        ),
        (
            ["--memeval-suite", "dimensions"],
            ["ERROR: --memeval-suite needs --memeval-engine; fix: *"],
        ),
        (
            ["--memeval-engine", "reference", "--memeval-fail-under", "80"],
            ["*--memeval-fail-under: `80` is not a share between 0 and 1, e.g. 0.8"],
        ),
    ],
)
def test_a_bad_option_ends_the_session_naming_it(
    pytester: pytest.Pytester, args: list[str], says: list[str]
) -> None:
    result = run(pytester, *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(says)
    assert "Traceback" not in result.stderr.str()


def test_without_the_options_the_plugin_adds_nothing(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_mine="def test_mine():\n    assert True\n")
    pytester.makeconftest(
        """
        import sys

        def pytest_collection_finish(session):
            names = sorted(m for m in sys.modules if m.split(".")[0] == "memeval")
            print("memeval modules:", " ".join(names))
        """
    )
    result = run(pytester, "-v", "-s")
    result.assert_outcomes(passed=1)
    assert outcome_ids(result, "PASSED") == {"test_mine.py::test_mine"}
    result.stdout.fnmatch_lines(
        ["*collected 1 item", "memeval modules: memeval memeval.pytest_plugin"]
    )
    assert "memeval:" not in result.stdout.str()  # no summary line either
    # The plugin was loaded, and only held back: its options are there.
    help_text = run(pytester, "--help")
    help_text.stdout.fnmatch_lines(["*--memeval-engine=REF*"])


def test_memeval_marker_runs_the_cases_without_the_projects_own_tests(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(test_mine="def test_mine():\n    assert True\n")
    args = ("-v", "--memeval-engine", "reference", "--memeval-only", "never_stored_parking")
    both = run(pytester, *args)
    assert outcome_ids(both, "PASSED") == {
        "test_mine.py::test_mine",
        "memeval::dimensions/abstention/never_stored_parking",
    }
    cases_only = run(pytester, *args, "-m", "memeval")
    assert outcome_ids(cases_only, "PASSED") == {
        "memeval::dimensions/abstention/never_stored_parking"
    }


def test_under_xdist_the_composite_line_counts_every_workers_cases(
    pytester: pytest.Pytester,
) -> None:
    args = ("--memeval-engine", "reference", "--memeval-suite", "dimensions")
    alone = run(pytester, *args)
    xml = pytester.path / "junit.xml"
    with_xdist = [arg for name in UNNEEDED if name != "xdist" for arg in ("-p", f"no:{name}")]
    spread = pytester.runpytest_subprocess(*with_xdist, "-n", "2", f"--junitxml={xml}", *args)
    assert alone.ret == spread.ret == pytest.ExitCode.OK
    fixtures = len(resolve("dimensions").fixtures)
    line = f"memeval: reference on dimensions: composite * over {fixtures} of {fixtures} cases"
    alone.stdout.fnmatch_lines([line])
    spread.stdout.fnmatch_lines([line])
    composite = [ln for ln in alone.outlines if ln.startswith("memeval: ")]
    assert [ln for ln in spread.outlines if ln.startswith("memeval: ")] == composite
    assert "case_id" not in xml.read_text()  # the results travel beside the reports, not in them

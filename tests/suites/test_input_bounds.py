"""What a suite file controls cannot make memeval slow or crash: each input is served in time
proportional to its size or refused, at once, with the file, the field and the fix.

And `suites validate` accepts nothing `run` would crash on: every document the property test
below draws (extreme days, dates, zones, confidences, `within`, noise) is either refused by the
loader or runs to a done result on the reference engine.
"""

from __future__ import annotations

import asyncio
import resource
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest
import yaml
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from memeval.engines import registry
from memeval.errors import SuiteError
from memeval.results import CaseStatus
from memeval.runner import run_case
from memeval.suites.common import MAX_QUESTION
from memeval.suites.loader import MAX_DEPTH, MAX_FILE_BYTES, MAX_VALUES, load_file
from tests.conftest import run_cli
from tests.suites.test_broken_files import FIXTURE, SCENARIO

T = TypeVar("T")

LOL = ", ".join(['"lol"'] * 9)
BOMB = (
    "kind: fixture\nlol0: &a0 ["
    + LOL
    + "]\n"
    + "".join(f"lol{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]\n" for i in range(1, 10))
)
"""Billion laughs: 9^10 (3.5 billion) strings from under 2 KB."""


def _write(tmp_path: Path, text: str, name: str = "case.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def _refused(path: Path) -> str:
    # CPU time, not wall time: the suite runs on every core at once, and a refusal that
    # expands nothing costs little CPU however long the machine keeps it waiting.
    start = time.process_time()
    with pytest.raises(SuiteError) as caught:
        load_file(path)
    assert time.process_time() - start < 0.5, "refusing took too long"
    rendered = caught.value.render()
    assert rendered.startswith(str(path)), rendered
    return rendered


@pytest.mark.parametrize("command", [("suites", "validate"), ("run", "--in-process", "--suite")])
def test_an_alias_bomb_is_refused_at_once(tmp_path: Path, command: tuple[str, ...]) -> None:
    assert len(BOMB.encode()) < 2_000
    bomb = _write(tmp_path, BOMB, "laughs.yaml")
    assert f"more than {MAX_VALUES:,} values" in _refused(bomb)
    env = {"MEMEVAL_DATABASE_URL": f"sqlite:///{tmp_path}/s.db"}
    fine = str(_write(tmp_path, FIXTURE, "fine.yaml"))
    _, baseline = _child_cpu(run_cli, *command, fine, env=env, cwd=tmp_path)
    done, spent = _child_cpu(run_cli, *command, str(bomb), env=env, cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "laughs.yaml" in done.stderr and "fix:" in done.stderr
    assert "Traceback" not in done.stderr + done.stdout
    # CPU, not wall time, for the reason `_refused` gives: what the bomb adds must be none.
    assert spent < baseline + 1.0, (spent, baseline)


def _child_cpu(cli: Callable[..., T], *args: str, **kwargs: object) -> tuple[T, float]:
    """What `cli` returned, and the CPU seconds of the process it ran and waited for."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = cli(*args, **kwargs)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return done, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("kind: fixture\nloop: &x [1, *x]\n", "refers to a value that contains it"),
        ("kind: fixture\ndeep: " + "[" * 2000 + "]" * 2000 + "\n", "not valid YAML"),
        ("kind: fixture\ndeep: " + "[" * 80 + "]" * 80 + "\n", f"deeper than {MAX_DEPTH}"),
        (
            "kind: fixture\n" + "".join(f"{'  ' * i}k{i}:\n" for i in range(90)) + "  " * 90 + "v",
            f"deeper than {MAX_DEPTH}",
        ),
        ("kind: fixture\nn: " + "9" * 5000 + "\n", "unreadable YAML value"),
        ("kind: fixture\nbig: '" + "x" * (MAX_FILE_BYTES + 1) + "'\n", "at most 1,000,000"),
    ],
    ids=["recursive-alias", "nested-past-libyaml", "nested-flow", "nested-block", "int", "size"],
)
def test_files_that_expand_or_nest_without_bound_are_refused(
    tmp_path: Path, text: str, said: str
) -> None:
    rendered = _refused(_write(tmp_path, text))
    assert said in rendered and "fix:" in rendered, rendered


LONG = "why " * (MAX_QUESTION // 4 + 1)

DOC_AT = "    at: 9999-12-31T23:59:00Z\n    text: The"
NOW = "start: 2026-01-05\nnow: 0001-01-01T00:30:00-01:00"
THREAD = "threads:\n  - id: t\n    day: 3000000\n    exchanges: [{user: u, reply: r}]\ndocuments:"
LATE = "recorded_at: 9999-12-31T23:00:00-05:00"
AS_OF = "  - as_of: 0001-01-01T00:00:00+05:00\n    text: How"

# (base, text to replace, replacement, the field the message must name, the fix it must give)
BOUNDS = [
    (SCENARIO, "    text: The", "    day: 3000000\n    text: The", "documents[0].day", "36525"),
    (SCENARIO, "documents:", THREAD, "threads[0].day", "36525"),
    (SCENARIO, "start: 2026-01-05", "start: 9999-12-31", "start", "8999-12-31"),
    (SCENARIO, "start: 2026-01-05", "start: 0001-01-01", "start", "0002-01-01"),
    (SCENARIO, "    text: The", DOC_AT, "documents[0].at", "8999"),
    (SCENARIO, "start: 2026-01-05", NOW, "now", "0002"),
    (SCENARIO, "    question: Where", f"    question: {LONG}Where", "probes[0].question", "2000"),
    (SCENARIO, "documents:", "noise: {items: 5}\ndocuments:", "(document)", "match: word"),
    (FIXTURE, "recorded_at: 2025-02-01T00:00:00Z", LATE, "assertions[0].recorded_at", "8999"),
    (
        FIXTURE,
        "confidence: 0.9",
        "confidence: .nan",
        "assertions[0].confidence",
        "no larger than 1",
    ),
    (
        FIXTURE,
        "confidence: 0.9",
        "confidence: -.inf",
        "assertions[0].confidence",
        "no smaller than 0",
    ),
    (FIXTURE, "  - text: How", AS_OF, "queries[0].as_of", "0002"),
    (FIXTURE, "  - text: How", f"  - text: {LONG}How", "queries[0].text", "2000"),
]


@pytest.mark.parametrize(("base", "old", "new", "field", "fix"), BOUNDS)
def test_out_of_range_values_are_refused_where_they_stand(
    tmp_path: Path, base: str, old: str, new: str, field: str, fix: str
) -> None:
    assert old in base
    text = base.replace(old, new, 1)
    if "noise" in new:  # the only expected string is in every distractor's words
        text = text.replace("expect: [ap-south-1]", "expect: [e]")
    rendered = _refused(_write(tmp_path, text))
    assert f"field `{field}`" in rendered and fix in rendered, rendered
    assert ".yaml:" in rendered.splitlines()[0], "no line number"


# ---- validate accepts only what runs ---------------------------------------------------------

TAME = {
    "day": st.integers(min_value=0, max_value=36_525) | st.sampled_from([0, 36_525]),
    "year": st.integers(min_value=2, max_value=8999) | st.sampled_from([2, 8999]),
    "confidence": st.floats(min_value=0, max_value=1),
}
WILD = {
    "day": st.sampled_from([-1, 36_526, 3_000_000, 10**40]),
    "year": st.sampled_from([1, 9000, 9999]),
    "confidence": st.sampled_from([float("nan"), float("inf"), -1e-9, 1.0000001]),
}
"""Values memeval computes with (edges included), and values it must refuse."""


def _value(draw: st.DrawFn, name: str) -> object:
    """Mostly tame, so most documents run; now and then wild, so refusals are tested too."""
    return draw(WILD[name] if draw(st.integers(0, 9)) == 0 else TAME[name])


def _stamp(draw: st.DrawFn) -> str:
    rest = draw(st.sampled_from(["01-01T00:00:00", "12-31T23:59:59", "06-15T12:00:00"]))
    zone = draw(st.sampled_from(["Z", "+14:00", "-12:00", "+05:30", ""]))
    return f"{_value(draw, 'year'):04d}-{rest}{zone}"


def _date(draw: st.DrawFn) -> str:
    return f"{_value(draw, 'year'):04d}-{draw(st.sampled_from(['01-01', '12-31']))}"


def _scenario(draw: st.DrawFn) -> dict:
    thread = {
        "id": "t",
        "day": _value(draw, "day"),
        "start": draw(st.sampled_from(["00:00", "23:59"])),
    }
    if draw(st.booleans()):
        thread["exchanges"] = [{"user": "Which port?", "reply": "Port 8443."}] * draw(
            st.integers(1, 3)
        )
    else:
        thread["turns"] = [
            {"role": "user", "text": "Port 8443."}
            | ({"at": _stamp(draw)} if draw(st.booleans()) else {})
            for _ in range(draw(st.integers(1, 3)))
        ]
    doc = {"id": "d", "title": "Doc", "text": "The port is 8443.", "day": _value(draw, "day")}
    if draw(st.booleans()):
        doc["at"] = _stamp(draw)
    learning = {
        "id": "l",
        "text": "Deploys happen on Fridays.",
        "confidence": _value(draw, "confidence"),
    }
    data = {
        "kind": "scenario", "name": "s", "title": "S", "start": _date(draw),
        "documents": [doc], "learnings": [learning], "threads": [thread],
        "probes": [
            {"id": "p", "question": "Which port?", "style": "lexical", "expect": ["8443"]},
            {"id": "c", "question": "Which port?", "via": "compact", "thread": "t",
             "drop": draw(st.integers(1, 4)), "style": "lexical", "expect": ["8443"]},
        ],
    }  # fmt: skip
    if draw(st.booleans()):
        data["now"] = _stamp(draw)
    if draw(st.booleans()):
        data["noise"] = {"items": draw(st.integers(1, 30)), "seed": draw(st.integers())}
    return data


def _fixture(draw: st.DrawFn) -> dict:
    assertion = {
        "id": "a", "text": "The CFO is Ann.", "source": "hr",
        "confidence": _value(draw, "confidence"), "subject": "company", "predicate": "cfo",
        "object": "Ann", "exclusive": True,
    }  # fmt: skip
    for name in ("valid_from", "valid_to", "recorded_at"):
        if draw(st.booleans()):
            assertion[name] = _stamp(draw)
    query = {
        "text": "Who is the CFO?",
        "checks": [{"contains": "Ann", "within": _value(draw, "day")}],
    }
    if draw(st.booleans()):
        query["as_of"] = _stamp(draw)
    data = {
        "kind": "fixture", "dimension": "temporal", "name": "f", "title": "F", "tests": "x",
        "assertions": [assertion], "queries": [query],
    }  # fmt: skip
    if draw(st.booleans()):
        data["now"] = _stamp(draw)
    return data


@st.composite
def documents(draw: st.DrawFn) -> dict:
    return _scenario(draw) if draw(st.booleans()) else _fixture(draw)


async def _run(case: object) -> CaseStatus:
    engine = registry.create("reference")
    try:
        return (await run_case(case, engine, run_id="bounds")).status  # type: ignore[arg-type]
    finally:
        await engine.close()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents())
def test_what_validate_accepts_runs(tmp_path_factory: pytest.TempPathFactory, data: dict) -> None:
    path = tmp_path_factory.mktemp("bounds") / "case.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    try:
        (located,) = load_file(path)
    except SuiteError as exc:
        assert str(path) in exc.render()
        event("refused: " + exc.render().split(": ", 1)[1][:60])
        return
    event(f"ran a {data['kind']}")
    assert asyncio.run(_run(located.case)) is CaseStatus.done

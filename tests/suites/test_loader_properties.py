"""Property tests: whatever broken document reaches the loader, the outcome is a SuiteError."""

from __future__ import annotations

import tempfile
from pathlib import Path

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memeval.errors import SuiteError
from memeval.suites.loader import load_file
from tests.suites.test_broken_files import FIXTURE, SCENARIO

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _load(text: str) -> str:
    """'ok' when the document is valid, 'error' when rejected clearly; anything else raises."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "case.yaml"
        path.write_text(text, encoding="utf-8")
        try:
            load_file(path)
        except SuiteError as exc:
            rendered = exc.render()
            assert str(path) in rendered, rendered
            assert "Traceback" not in rendered
            return "error"
    return "ok"


@SETTINGS
@given(st.text(max_size=400))
def test_arbitrary_text(text: str) -> None:
    assert _load(text) in ("ok", "error")


scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True), st.text(max_size=20)
)
trees = st.recursive(
    scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(st.text(max_size=10), children, max_size=4),
    ),
    max_leaves=20,
)


@SETTINGS
@given(trees)
def test_arbitrary_structures(tree: object) -> None:
    assert _load(yaml.safe_dump(tree)) == "error"


@SETTINGS
@given(
    base=st.sampled_from([SCENARIO, FIXTURE]),
    line=st.integers(min_value=0, max_value=40),
    action=st.sampled_from(["delete", "duplicate", "garble", "dedent"]),
    junk=st.text(max_size=12),
)
def test_mutated_valid_documents(base: str, line: int, action: str, junk: str) -> None:
    lines = base.splitlines()
    i = line % len(lines)
    if action == "delete":
        del lines[i]
    elif action == "duplicate":
        lines.insert(i, lines[i])
    elif action == "garble":
        lines[i] = lines[i][: len(lines[i]) // 2] + junk
    else:
        lines[i] = lines[i].lstrip()
    assert _load("\n".join(lines)) in ("ok", "error")


@SETTINGS
@given(
    base=st.sampled_from([SCENARIO, FIXTURE]),
    key=st.sampled_from(["start", "confidence", "style", "via", "expect", "dimension", "text"]),
    value=scalars,
)
def test_wrong_typed_values(base: str, key: str, value: object) -> None:
    data = yaml.safe_load(base)
    target = data["probes"][0] if "probes" in data else data["assertions"][0]
    target[key] = value
    assert _load(yaml.safe_dump(data)) in ("ok", "error")

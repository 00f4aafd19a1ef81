"""The README's Python example runs verbatim: the block under "## Using it from Python"."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HEADING = "## Using it from Python"
BLOCK = re.compile(r"```python\n(.*?)```", re.DOTALL)


def example() -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert HEADING in readme, f"README.md has no `{HEADING}` section"
    found = BLOCK.search(readme.split(HEADING, 1)[1])
    assert found is not None, "no ```python block under the heading"
    return found.group(1)


def test_the_readme_example_evaluates_an_engine_subclass(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)  # the example stores its run where a user would: ./memeval-runs
    monkeypatch.delenv("MEMEVAL_DATABASE_URL", raising=False)
    monkeypatch.delenv("MEMEVAL_BROKER_URL", raising=False)
    code = example()
    assert "memeval.evaluate(" in code
    assert "(Engine)" in code, "the example subclasses the engine contract itself"

    exec(compile(code, "README.md", "exec"), {"__name__": "__main__"})

    printed = re.fullmatch(r"composite (\d\.\d\d)\n", capsys.readouterr().out)
    assert printed is not None, "the example prints the composite"
    composite = float(printed.group(1))
    assert 0.0 < composite < 1.0  # a keyword store passes some fixtures, not all
    with sqlite3.connect(tmp_path / "memeval-runs" / "memeval.db") as db:
        rows = db.execute("select engine, status, planned_count from runs").fetchall()
    assert rows == [("__main__:MyEngine", "finished", rows[0][2])] and rows[0][2] > 10

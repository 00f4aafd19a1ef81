"""The commands stay thin: parse options, call the run layer (`memeval.evaluation`, which
`memeval.api` shares), print. A command that grows past a screen is doing the run's work."""

from __future__ import annotations

import ast
from pathlib import Path

CLI = Path(__file__).resolve().parents[1] / "memeval" / "cli"
MOST_LINES = 60


def functions(path: Path) -> list[tuple[str, int]]:
    """Every function and method in `path` with its length, signature and docstring included."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    return [
        (f"{path.name}:{node.lineno} {node.name}", (node.end_lineno or 0) - node.lineno + 1)
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    ]


def test_no_cli_function_is_longer_than_a_screen() -> None:
    found = [each for path in sorted(CLI.glob("*.py")) for each in functions(path)]
    assert any(name.endswith(" run") for name, _ in found), "the walk found `memeval run`"
    too_long = [f"{name} ({lines} lines)" for name, lines in found if lines > MOST_LINES]
    assert not too_long, f"over {MOST_LINES} lines: {', '.join(too_long)}"


def test_the_walk_measures_a_long_function(tmp_path: Path) -> None:
    body = "\n".join(f"    x{i} = {i}" for i in range(MOST_LINES))
    sample = tmp_path / "long.py"
    sample.write_text(f"def long() -> None:\n{body}\n", encoding="utf-8")
    assert functions(sample) == [("long.py:1 long", MOST_LINES + 1)]

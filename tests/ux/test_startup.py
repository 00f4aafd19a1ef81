"""Startup cost a user feels: what `memeval --help` and `memeval runs` import, held structurally
(which modules are loaded) rather than by timing, which a busy machine would make flaky."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import memeval
from memeval.cli import COMMANDS
from memeval.cli.lazy import build
from memeval.store import open_store
from tests.conftest import ROOT, run_cli

# What only a command that needs it may load: a broker client, the ORM, an HTTP client, the
# engines, the report stack, the farm.
HEAVY = ("celery", "kombu", "redis", "sqlalchemy", "sqlmodel", "httpx", "memeval.engines")
HEAVY_FOR_RUNS = (
    *("celery", "kombu", "redis", "httpx", "sqlalchemy", "sqlmodel"),
    *("memeval.report", "memeval.runner", "memeval.engines.reference"),
)


def loaded_after(argv: list[str], tmp_path: Path) -> tuple[subprocess.CompletedProcess, set[str]]:
    """`memeval ARGV` run by `memeval.cli.main` in a fresh interpreter, and every module that
    interpreter had loaded when the command ended."""
    modules = tmp_path / "modules.json"
    script = (
        "import json, sys\n"
        "from memeval.cli import main\n"
        f"sys.argv = ['memeval', *{argv!r}]\n"
        "try:\n"
        "    main()\n"
        "finally:\n"
        f"    open({str(modules)!r}, 'w').write(json.dumps(sorted(sys.modules)))\n"
    )
    env = {**os.environ, "MEMEVAL_DATABASE_URL": f"sqlite:///{tmp_path / 'runs.db'}"}
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return done, set(json.loads(modules.read_text()))


def reached(modules: set[str], heavy: tuple[str, ...]) -> list[str]:
    return sorted(m for m in modules if any(m == h or m.startswith(f"{h}.") for h in heavy))


def test_help_lists_every_command_and_imports_none_of_them(tmp_path: Path):
    done, modules = loaded_after(["--help"], tmp_path)
    assert done.returncode == 0, done.stderr
    assert reached(modules, HEAVY) == []
    assert not [m for m in modules if m.startswith("memeval.cli.") and m != "memeval.cli.lazy"]
    listed = " ".join(done.stdout.replace("│", " ").split())  # help wraps inside its box
    for name, entry in COMMANDS.items():
        assert f" {name} {' '.join(entry.help.split())}" in listed


def test_runs_reads_the_store_without_the_farm_or_the_reports(tmp_path: Path):
    open_store(f"sqlite:///{tmp_path / 'runs.db'}").engine  # noqa: B018 - a store, no runs yet
    done, modules = loaded_after(["runs", "--json"], tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []  # the command ran, against the empty store
    assert "memeval.store.listing" in modules  # the check below looks at a process that used it
    assert reached(modules, HEAVY_FOR_RUNS) == []


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_the_table_says_what_the_command_says(name: str):
    """`--help` shows the table's line; the command's own help (its docstring) must open with
    exactly that, or the listing and `memeval NAME --help` drift apart."""
    entry = COMMANDS[name]
    command = build(name, entry)
    assert command.name == name
    assert (command.help or "").split("\n\n")[0] == entry.help, (
        f"update COMMANDS[{name!r}] in memeval/cli/__init__.py"
    )


def test_a_command_keeps_its_own_options_and_passthrough():
    worker = build("worker", COMMANDS["worker"])
    assert {"--concurrency", "--pool", "--loglevel"} <= {o for p in worker.params for o in p.opts}
    assert worker.context_settings["ignore_unknown_options"] is True
    suites = build("suites", COMMANDS["suites"])
    assert {"list", "validate", "schema", "import"} <= set(suites.commands)


def test_version_from_the_entry_point_and_as_a_module():
    script = Path(sys.executable).parent / "memeval"
    assert script.is_file(), "the venv's `memeval` entry point is not installed"
    for done in (
        subprocess.run([script, "--version"], capture_output=True, text=True, timeout=60),
        run_cli("--version"),
    ):
        assert done.returncode == 0, done.stderr
        assert done.stdout == f"memeval {memeval.__version__}\n"
    assert memeval.__version__ == "0.1.0"


def test_an_unknown_command_still_gets_a_suggestion():
    done = run_cli("rnu", cwd=ROOT)
    assert done.returncode == 2
    assert "No such command 'rnu'" in done.stderr and "Did you mean 'run'?" in done.stderr

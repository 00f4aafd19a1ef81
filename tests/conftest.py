"""Shared test helpers, and how the suite is spread over pytest-xdist workers."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import settings

from tests import markers

ROOT = Path(__file__).resolve().parent.parent

# Bytecode caches on, whatever the shell says (PYTHONDONTWRITEBYTECODE=1 is common in CI images):
# hundreds of tests run `memeval` or a worker node in a fresh interpreter, each of which would
# compile the package from source again (about 0.3 s of CPU each), and every xdist worker would
# rewrite every test module's asserts again. Popped here, before xdist starts its workers.
sys.dont_write_bytecode = False
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

# Property tests check what code returns, not how fast: on a shared 2-core machine under a full
# xdist run, a 0.02 ms example once took 346 ms and failed Hypothesis's default 200 ms deadline.
settings.register_profile("memeval", deadline=None)
settings.load_profile("memeval")


def run_cli(
    *args: str, cwd: Path | None = None, env: dict[str, str] | None = None, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """Run the installed `memeval` entry point the way a user would."""
    full_env = {**os.environ, **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "memeval", *args],
        cwd=cwd or ROOT,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.fixture
def cli():
    return run_cli


# Fixtures (`where::name`) whose tests run an engine built on real libraries (graphiti's Kuzu,
# mem0's qdrant) over the stand-in models: the longest tests of the suite, handed out first.
LONGEST = frozenset({"tests/oss/test_run_suites.py::served"})
# Fixtures whose tests run `memeval` end to end (a farm, Celery workers, a private Redis, the
# CLI in a subprocess): seconds to tens of seconds each, handed out next.
LONG = frozenset({
    "tests/farm::farm", "tests/farm::shared", "tests/infra::fleet", "tests::cli",
    "tests/docs/test_docs_run.py::reader",  # a docs page typed into a shell: up to a minute
})  # fmt: skip
# Module-scoped fixtures whose tests are better spread over the workers than kept together:
# each test is long, the fixture (a model server) cheap beside it.
SPREAD = LONGEST


def _fixtures(item: pytest.Item) -> dict[str, str]:
    """Every fixture `item` uses, as `where::name` (where: the folder or module defining it,
    empty for pytest's own), mapped to its scope."""
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return {}
    used = {}
    for name, defs in info.name2fixturedefs.items():
        if name in info.names_closure:
            used[f"{defs[-1].baseid}::{name}"] = defs[-1].scope
    return used


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Longest tests first, one worker per shared fixture, and markers by what each needs.

    Under xdist (`--dist loadgroup --no-loadscope-reorder`) tests are handed out in this order,
    one at a time: starting the long ones first keeps any worker from being left alone with
    one at the end. A module- or session-scoped fixture is built once per worker that needs
    it, so the tests of a module that share one of this suite's are kept on one worker (an
    `xdist_group` named after the module) instead of each worker building it.
    """
    ranks = {}
    for item in items:
        used = _fixtures(item)
        shared = [
            key
            for key, scope in used.items()
            if scope in ("module", "package", "session")
            and key.startswith("tests")
            and key not in SPREAD
        ]
        if shared:
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::")[0]))
        ranks[item.nodeid] = 0 if used.keys() & LONGEST else 1 if used.keys() & LONG else 2
        markers.mark(item, slow=ranks[item.nodeid] < 2)
    items.sort(key=lambda item: ranks[item.nodeid])  # stable: collection order within a rank

"""memeval as a pytest plugin: an engine author's CI gates on memeval like on any other test.

    pytest -m memeval --memeval-engine my_pkg.engine:MyEngine --memeval-suite dimensions

adds one test per case of the suite, each named by its case id
(`memeval::dimensions/abstention/never_stored_parking`), and runs it in-process through the
same runner as `memeval run --in-process`, on a tenant of its own. Every item carries the
`memeval` marker, so `-m memeval` runs the cases without the project's other tests, and `-k`
selects cases by any part of their id.

Options:

- `--memeval-engine REF`: a built-in engine (`reference`, `naive`, ...), a name registered
  under the `memeval.engines` entry points, or `package.module:Class`. The module is imported
  the way the tests would import it: install the package, or set pytest's `pythonpath`.
- `--memeval-suite NAME|PATH`: `dimensions`, `lifecycle`, `all` (the default), or a file or
  folder of one's own cases, as `memeval run --suite` reads it.
- `--memeval-only CASE_ID`, repeatable: those cases alone (a full id, or its last part).
- `--memeval-fail-under SHARE`: a case fails when its score is below SHARE (0–1).

When a case fails. Without `--memeval-fail-under`, a case passes only when nothing in it
missed: every check held and every scored probe found its answer, with nothing forbidden in
a pack (what `memeval report` lists under Misses). That is what a test means to an engine
author, and it keeps a regression in one check from hiding behind a passing average. With
`--memeval-fail-under`, a case fails when its score (the share of its checks, or of its
scored probes, that passed) is below the threshold, and one more item, `memeval::composite`,
fails when the composite of the selected cases is below it, as `memeval run --fail-under`
would (the composite weighs dimension fixtures, so a lifecycle-only suite has no such item).

A failure reads as the case's misses (where, what was expected, what came back), not a
traceback. An engine that cannot be reached (`EngineUnavailable`), has run out of credit, or
fails its preflight makes the case an error, not a failure: the engine's memory was not tested.
The terminal summary adds one line: the composite of the cases that ran.

Without `--memeval-engine` the plugin adds nothing, and importing it loads nothing else: it
is loaded into every pytest session of anyone who installs memeval (`-p no:memeval` turns
it off).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pytest

ENGINE = "--memeval-engine"
DEPENDENT = ("--memeval-suite", "--memeval-only", "--memeval-fail-under")


def share(text: str) -> float:
    """A threshold between 0 and 1, refused by argparse (a usage error) otherwise."""
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"`{text}` is not a share between 0 and 1, e.g. 0.8")
    return value


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("memeval", "memeval: one test per case of a memory-engine suite")
    group.addoption(
        ENGINE,
        metavar="REF",
        help="Engine to evaluate: reference, naive, ... or package.module:Class.",
    )
    group.addoption(
        "--memeval-suite",
        metavar="NAME|PATH",
        help="dimensions, lifecycle, all (default), or a file or folder of cases.",
    )
    group.addoption(
        "--memeval-only",
        metavar="CASE_ID",
        action="append",
        help="Run only this case (repeatable).",
    )
    group.addoption(
        "--memeval-fail-under",
        metavar="SHARE",
        type=share,
        help="A case fails below this score (0-1); also gates the composite. "
        "Default: a case fails on any miss.",
    )


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption(ENGINE) is None:
        given = [name for name in DEPENDENT if config.getoption(name) is not None]
        if given:
            import pytest

            raise pytest.UsageError(
                f"{given[0]} needs {ENGINE}; fix: add {ENGINE} NAME or package.module:Class"
            )
        return
    from memeval.pytest_session import MemevalSession

    config.pluginmanager.register(MemevalSession.from_config(config), MemevalSession.NAME)

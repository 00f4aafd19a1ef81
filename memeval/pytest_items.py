"""The pytest nodes the plugin adds: one item per case, and the composite gate.

They hang off a collector named `memeval` that belongs to no file and sits beside the
session's test files, so a case's node id is `memeval::<case id>`. A case runs in its item's
setup, so an engine that cannot run it shows as an error, and its verdict is judged in the
call, so a memory that misses shows as a failure whose message is the misses themselves.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import groupby
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from memeval.errors import CreditsExhausted, EngineUnavailable, MemevalError
from memeval.report.gate import below_threshold
from memeval.report.tables import Miss, misses
from memeval.results import CaseResult, CaseStatus
from memeval.suites.fixture import Fixture
from memeval.suites.loader import Located
from memeval.suites.scenario import Scenario

if TYPE_CHECKING:
    from memeval.pytest_session import MemevalSession

COMPOSITE = "composite"


class CaseFailed(Exception):
    """A verdict already written for the reader: shown as is, without a traceback."""


class MemevalSuite(pytest.Collector):
    def __init__(self, *, state: MemevalSession, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.state = state

    def collect(self) -> Iterator[pytest.Item]:
        for located in self.state.cases:
            yield CaseItem.from_parent(self, name=located.case.id, located=located)
        gated = self.state.options.fail_under is not None
        if gated and any(isinstance(c.case, Fixture) for c in self.state.cases):
            yield CompositeItem.from_parent(self, name=COMPOSITE)


class MemevalItem(pytest.Item):
    parent: MemevalSuite

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.add_marker("memeval")

    @property
    def state(self) -> MemevalSession:
        return self.parent.state

    def run(self, case: Scenario | Fixture) -> CaseResult:
        """The case's result; an engine that could not run it errors the item, no traceback."""
        engine = self.state.engine_name
        try:
            result = self.state.result(case)
        except (EngineUnavailable, CreditsExhausted) as exc:  # before `CreditsExhausted`'s base
            why = f"{type(exc).__name__}: {exc}"
        except MemevalError as exc:
            why = exc.render()
        else:
            if result.status is CaseStatus.done:
                return result
            why = f"case {result.status.value}: {result.error or 'no reason given'}"
        # Failed outside the handler, so pytest prints no chained traceback.
        pytest.fail(f"{engine} could not run {case.id}: {why}", pytrace=False)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, CaseFailed):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style)


class CaseItem(MemevalItem):
    def __init__(self, *, located: Located, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.located = located

    @property
    def case(self) -> Scenario | Fixture:
        return self.located.case

    def setup(self) -> None:
        self.run(self.case)

    def runtest(self) -> None:
        result = self.run(self.case)
        threshold = self.state.options.fail_under
        missed = misses([result])
        score = result.score or 0.0
        if missed if threshold is None else score < threshold:
            raise CaseFailed(failure_text(result, missed, threshold))

    def reportinfo(self) -> tuple[Path, int | None, str]:
        line = self.located.line - 1 if self.located.line else None
        return Path(self.located.path), line, f"memeval case {self.case.id}"


class CompositeItem(MemevalItem):
    """The suite's composite against --memeval-fail-under, over the cases selected to run."""

    def setup(self) -> None:
        if not any(isinstance(c, Fixture) for c in self.state.selected):
            pytest.skip("no dimension fixture selected: the composite weighs fixtures only")
        for case in self.state.selected:
            self.run(case)

    def runtest(self) -> None:
        threshold = self.state.options.fail_under
        assert threshold is not None  # the item exists only with a threshold
        why = below_threshold(self.state.report(), threshold, "--memeval-fail-under")
        if why is not None:
            raise CaseFailed(why)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, "memeval composite"


def failure_text(result: CaseResult, missed: list[Miss], threshold: float | None) -> str:
    """The case's misses grouped by query or probe: what was expected, and what came back."""
    score = f"score {result.score or 0.0:.2f}"
    if threshold is None:
        head = f"{len(missed)} missed ({score}; any miss fails without --memeval-fail-under)"
    else:
        head = f"{score} is below --memeval-fail-under {threshold:.2f} ({len(missed)} missed)"
    lines = [f"{result.engine}: {head}"]
    for (where, question, got), group in groupby(
        missed, key=lambda m: (m.where, m.question, tuple(m.head))
    ):
        lines.append(f"{where}: {question}" if question else where)
        for m in group:
            lines.append(f"  {m.status} — {m.expected}" + (f" ({m.detail})" if m.detail else ""))
        if got:
            lines += ["  got:", *(f"    {line}" for line in got)]
    return "\n".join(lines)

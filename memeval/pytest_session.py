"""What the pytest plugin holds for one session once `--memeval-engine` is given: the engine,
the selected cases, one event loop, and each case's result as it lands.

It exists only in sessions that asked for it (see `memeval.pytest_plugin`), so everything
here may import freely. Cases run one per item on a single long-lived event loop: an engine's
connections belong to the loop they were opened on, so a loop per item would break them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Generator
from datetime import UTC, datetime

import pytest
from pydantic import BaseModel, Field

from memeval.engines.base import Engine
from memeval.engines.registry import create, parse_ref
from memeval.errors import MemevalError
from memeval.evaluation.planning import new_run_id, select
from memeval.evaluation.preflight import instance_problem
from memeval.pytest_items import CaseItem, MemevalSuite
from memeval.report.numbers import pct
from memeval.results import CaseResult, RunReport
from memeval.runner import failed_result, run_case
from memeval.runner.failures import Action, judge
from memeval.suites.catalog import resolve
from memeval.suites.fixture import Fixture
from memeval.suites.loader import Located
from memeval.suites.scenario import Scenario
from memeval.summary import build_report

NODE = "memeval"
"""The suite's node, parent of every case: `memeval::dimensions/...`."""
RESULT = "memeval_result"


class PluginOptions(BaseModel):
    engine: str
    suite: str = "all"
    only: list[str] = Field(default_factory=list)
    fail_under: float | None = Field(default=None, ge=0.0, le=1.0)

    @classmethod
    def from_config(cls, config: pytest.Config) -> PluginOptions:
        return cls(
            engine=config.getoption("--memeval-engine"),
            suite=config.getoption("--memeval-suite") or "all",
            only=config.getoption("--memeval-only") or [],
            fail_under=config.getoption("--memeval-fail-under"),
        )


def usage(option: str, value: str, exc: MemevalError) -> pytest.UsageError:
    """The option, then the error as the CLI prints it: what is wrong, and the fix."""
    return pytest.UsageError(f"{option} {value}: {exc.render()}")


class MemevalSession:
    """Registered as a plugin, so its hooks run only in sessions that evaluate an engine."""

    NAME = "memeval-session"

    def __init__(self, options: PluginOptions, engine: Engine, cases: list[Located]) -> None:
        self.options = options
        self.cases = cases
        self.run_id = new_run_id()
        self.started_at = datetime.now(UTC)
        self.results: dict[str, CaseResult] = {}
        self.selected: list[Scenario | Fixture] = []  # the cases whose items will run
        self._engine = engine
        self._loop = asyncio.Runner()
        self._checked = False
        self._broken: MemevalError | None = None  # why preflight failed, for every later case

    @classmethod
    def from_config(cls, config: pytest.Config) -> MemevalSession:
        """Every option checked before collection: a typo ends the session, not 50 cases."""
        options = PluginOptions.from_config(config)
        try:
            suite = resolve(options.suite)
        except MemevalError as exc:
            raise usage("--memeval-suite", options.suite, exc) from None
        try:
            picked = {c.id for c in select(suite, options.only, [])}
        except MemevalError as exc:
            raise usage("--memeval-only", " ".join(options.only), exc) from None
        try:  # last: nothing after it can fail and leave the engine unclosed
            engine = create(options.engine)
        except MemevalError as exc:
            raise usage("--memeval-engine", options.engine, exc) from None
        config.addinivalue_line("markers", "memeval: a memeval case, added by --memeval-engine")
        return cls(options, engine, [c for c in suite.cases if c.case.id in picked])

    @property
    def engine_name(self) -> str:
        return parse_ref(self.options.engine).name

    def result(self, case: Scenario | Fixture) -> CaseResult:
        """The case's result, run on first demand: `memeval::composite` may come first."""
        if case.id not in self.results:
            self.results[case.id] = self._loop.run(self._run(case))
        return self.results[case.id]

    async def _run(self, case: Scenario | Fixture) -> CaseResult:
        if self._broken is not None:
            raise self._broken
        if not self._checked:  # the check `memeval run` makes, once, before any case
            self._broken = await instance_problem(self._engine, self.options.engine)
            if self._broken is not None:
                raise self._broken
            self._checked = True
        started = datetime.now(UTC)
        try:
            return await run_case(case, self._engine, run_id=self.run_id)
        except Exception as exc:  # the one policy: down or out of credit errors the item
            verdict = judge(exc)
            if verdict.action is Action.stop:
                raise
            return failed_result(
                case,
                run_id=self.run_id,
                trial=0,
                engine=self._engine.name,
                reason=verdict.reason,
                started_at=started,
                status=verdict.status,
            )

    def report(self) -> RunReport:
        """The report of the selected cases that have a result, as `memeval run` builds it."""
        planned = [f"{c.id}#0" for c in self.selected]
        return build_report(
            run_id=self.run_id,
            label=f"pytest-{self.engine_name}",
            engine=self.options.engine,
            suite=self.options.suite,
            started_at=self.started_at,
            finished_at=datetime.now(UTC),
            cases=[self.results[c.id] for c in self.selected if c.id in self.results],
            planned=planned,
        )

    # ---- hooks -------------------------------------------------------------------------

    @pytest.hookimpl(wrapper=True)
    def pytest_make_collect_report(
        self, collector: pytest.Collector
    ) -> Generator[None, pytest.CollectReport, pytest.CollectReport]:
        """The suite joins the session's own collection, beside the test files: pytest counts
        its cases, and -k, -m, --deselect and --lf treat them like any other test."""
        report = yield
        if isinstance(collector, pytest.Session) and report.passed:
            suite = MemevalSuite.from_parent(collector, name=NODE, nodeid=NODE, state=self)
            report.result = [*report.result, suite]
        return report

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.selected = [i.case for i in session.items if isinstance(i, CaseItem)]

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: object, ids: list[str]) -> None:
        """Under pytest-xdist the workers collect, not this process: their ids say which
        cases were selected (every worker collects the same)."""
        chosen = set(ids)
        self.selected = [c.case for c in self.cases if f"{NODE}::{c.case.id}" in chosen]

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        """A case's result, errored ones included, rides on its setup report: pytest-xdist
        sends a report's attributes to the main process (and JUnit XML never sees them)."""
        report = yield
        if call.when == "setup" and isinstance(item, CaseItem):
            result = self.results.get(item.case.id)
            if result is not None:
                setattr(report, RESULT, result.model_dump(mode="json"))
        return report

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Results of cases a pytest-xdist worker ran, for the composite line printed here."""
        value = getattr(report, RESULT, None)
        if value is not None and value["case_id"] not in self.results:
            self.results[value["case_id"]] = CaseResult.model_validate(value)

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if not self.results:
            return
        report = self.report()
        ran = len(report.cases)
        line = (
            f"memeval: {self.engine_name} on {self.options.suite}: "
            f"composite {pct(report.composite)} over {ran} of {len(self.selected)} cases"
        )
        if self.options.fail_under is not None:
            line += f" (--memeval-fail-under {pct(self.options.fail_under)})"
        terminalreporter.write_line(line)

    def pytest_unconfigure(self) -> None:
        try:
            self._loop.run(self._engine.close())
        finally:
            self._loop.close()

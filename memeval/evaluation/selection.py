"""Which of a suite's cases a run plans, kept as a way to read them again rather than as the
cases themselves.

A published benchmark's cases are large (a LongMemEval-S instance is about 1.6 MB as a
`Scenario`, 500 of them 808 MB), so a run keeps each case's key, never its body: the plan is
made from one pass over the suite, and the cases are read again from it when they are sent,
and when a resume needs them.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from itertools import groupby

from pydantic import BaseModel, ConfigDict, Field

from memeval.errors import UsageError
from memeval.store import CaseKey
from memeval.suites.catalog import stream
from memeval.suites.fixture import Dimension, Fixture
from memeval.suites.haystack import Haystack, expand
from memeval.suites.scenario import Scenario

Case = Scenario | Fixture


def check_dimensions(dimensions: Sequence[str]) -> None:
    for name in dimensions:
        if name not in Dimension.__members__:
            raise UsageError(
                f"unknown dimension `{name}`",
                fix=f"use one of: {', '.join(d.value for d in Dimension)}",
            )


def check_limit(limit: int | None) -> None:
    if limit is not None and limit < 1:
        raise UsageError(f"--limit must be at least 1, not {limit}", fix="give a count of cases")


def chosen(
    cases: Iterable[Case], only: Sequence[str], dimensions: Sequence[str], limit: int | None = None
) -> Iterator[Case]:
    """The cases `--only` (a case id, or its last part) and `--dimension` pick, the first
    `limit` of them, as they are read. The checks that need the whole suite (an `--only` that
    matches nothing, an empty selection) raise at the end of the pass; a pass `limit` cut
    short cannot tell an `--only` beyond the cut from one that matches nothing, so it does not."""
    check_dimensions(dimensions)
    check_limit(limit)
    wanted, seen, count = set(only), set[str](), 0
    for case in cases:
        if dimensions and not (isinstance(case, Fixture) and case.dimension.value in dimensions):
            continue
        last = case.id.rsplit("/", 1)[-1]
        if wanted and case.id not in wanted and last not in wanted:
            continue
        seen.update((case.id, last))
        count += 1
        yield case
        if count == limit:
            return
    unknown = sorted(wanted - seen)
    if unknown:
        raise UsageError(
            f"no case matches --only {', '.join(unknown)}",
            fix="list the case ids with `memeval suites list --cases`",
        )
    if not count:
        raise UsageError("the selection holds no case", fix="widen --only / --dimension")


class Selection(BaseModel):
    """A suite spec (anchored, so it reads the same from any folder) and what picks from it."""

    model_config = ConfigDict(frozen=True)

    suite: str
    only: list[str] = Field(default_factory=list)
    dimension: list[str] = Field(default_factory=list)
    limit: int | None = None
    haystack: Haystack | None = None

    def cases(self) -> Iterator[Case]:
        """One pass over the suite: the selected cases, each haystack variant of them."""
        picked = chosen(stream(self.suite), self.only, self.dimension, self.limit)
        return picked if self.haystack is None else expand(picked, self.haystack)

    def absent(self, case_ids: set[str]) -> list[str]:
        """Which of these cases the suite no longer holds; the pass stops once it has seen
        them all, so a run of a file's first cases reads only those."""
        left = set(case_ids)
        for case in self.cases():
            left.discard(case.id)
            if not left:
                break
        return sorted(left)

    def find(self, keys: Sequence[CaseKey]) -> Iterator[tuple[Case, int]]:
        """The cases of `keys` (in plan order: trial by trial, each trial in suite order),
        read again from the suite, one pass a trial that stops once it has them all."""
        for trial, group in groupby(keys, key=lambda key: key.trial):
            left = {key.case_id for key in group}
            for case in self.cases():
                if case.id in left:
                    left.discard(case.id)
                    yield case, trial
                    if not left:
                        break
            if left:
                raise UsageError(
                    f"the suite `{self.suite}` no longer holds " + ", ".join(sorted(left)),
                    fix="restore those cases, or start a new run",
                )

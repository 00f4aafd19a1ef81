"""Finds the built-in suites, resolves `--suite`, and counts what a suite holds."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from functools import cache
from pathlib import Path

from pydantic import BaseModel, Field

from memeval.errors import UsageError
from memeval.importers import sources
from memeval.suites.fixture import Dimension, Fixture
from memeval.suites.loader import Located, load_paths
from memeval.suites.scenario import Scenario, Style

BUILTIN = ("lifecycle", "dimensions", "safety")
OPT_IN = ("loop_guard",)
"""Shipped suites too slow for `all` (a long conversation per case), run by name."""


@cache
def fixtures_root() -> Path:
    """The shipped suites: inside the wheel as `memeval/fixtures`, in a checkout at `fixtures/`."""
    here = Path(__file__).resolve().parent.parent
    for candidate in (here / "fixtures", here.parent / "fixtures"):
        if (candidate / "lifecycle").is_dir():
            return candidate
    raise UsageError(
        "the built-in suites are missing from this installation",
        fix="reinstall memeval with `pip install .` from a full checkout",
    )


class Suite(BaseModel):
    name: str
    cases: list[Located]

    @property
    def scenarios(self) -> list[Scenario]:
        return [c.case for c in self.cases if isinstance(c.case, Scenario)]

    @property
    def fixtures(self) -> list[Fixture]:
        return [c.case for c in self.cases if isinstance(c.case, Fixture)]


def resolve(spec: str) -> Suite:
    """`lifecycle`, `dimensions`, `safety`, `all`, `locomo:PATH` / `longmemeval:PATH` (a
    benchmark read from the user's copy), or a path to a file or folder of the user's own
    cases."""
    name, cases = located(spec)
    return Suite(name=name, cases=list(cases))


def located(spec: str) -> tuple[str, Iterator[Located]]:
    """The suite's name and its cases one at a time, each with where it was read: a benchmark
    file is read as it goes, so a caller keeping only what it needs of each case (a count, a
    run's plan, a dispatch window) holds one case of it at a time, whatever the file's size.
    An unknown spec raises here, before any case is read."""
    if spec == "all":
        return "all", iter(load_paths(fixtures_root() / n for n in BUILTIN))
    if spec in BUILTIN or spec in OPT_IN:
        return spec, iter(load_paths([fixtures_root() / spec]))
    if (benchmark := sources.parse(spec)) is not None:  # locomo:PATH, longmemeval:PATH
        where = str(benchmark[1])
        return spec, (Located(case=c, path=where, line=0) for c in sources.load(*benchmark))
    path = Path(spec)
    if not path.exists():
        raise UsageError(
            f"unknown suite `{spec}`",
            fix="use lifecycle, dimensions, safety, all, loop_guard, or the path of a file or "
            "folder of cases",
        )
    return str(path), iter(load_paths([path]))


def stream(spec: str) -> Iterator[Scenario | Fixture]:
    """The suite's cases one at a time, as `located` reads them."""
    for each in located(spec)[1]:
        yield each.case


def anchored(spec: str) -> str:
    """`spec` with its path made absolute, so the same suite is found from any working folder
    (`--resume` may run elsewhere); a built-in name stays as it is, and `locomo:PATH?options`
    keeps its benchmark name and options."""
    if spec in (*BUILTIN, *OPT_IN, "all"):
        return spec
    if (benchmark := sources.parse(spec)) is not None:
        query = spec.partition("?")[2]
        return f"{benchmark.name}:{benchmark.path.resolve()}" + (f"?{query}" if query else "")
    return str(Path(spec).resolve())


class SuiteCounts(BaseModel):
    scenarios: int
    probes: int
    probes_scored: int
    lexical: int
    paraphrase: int
    stale: int
    leak_checks: int
    abstain: int = 0
    with_evidence: int = 0
    probe_tags: dict[str, int] = Field(default_factory=dict)
    fixtures: int
    fixtures_per_dimension: dict[str, int]


def count(cases: Iterable[Scenario | Fixture]) -> SuiteCounts:
    """What the cases hold, tallied as they are read: a benchmark file is counted one case at a
    time, in the memory of one case whatever its size."""
    tally: Counter[str] = Counter()
    tags: Counter[str] = Counter()
    per_dim = {d.value: 0 for d in Dimension}
    for case in cases:
        if isinstance(case, Fixture):
            tally["fixtures"] += 1
            per_dim[case.dimension.value] += 1
            continue
        tally["scenarios"] += 1
        for p in case.probes:
            tally["probes"] += 1
            tags.update(p.tags)
            tally["leak_checks"] += bool(p.forbidden) and not p.abstain
            if p.scored:
                tally["probes_scored"] += 1
                tally["lexical"] += p.style is Style.lexical
                tally["paraphrase"] += p.style is Style.paraphrase
                tally["stale"] += bool(p.stale)
                tally["abstain"] += p.abstain
                tally["with_evidence"] += bool(p.evidence)
    return SuiteCounts.model_validate(
        {name: tally[name] for name in _TALLIED}
        | {"probe_tags": dict(sorted(tags.items())), "fixtures_per_dimension": per_dim}
    )


_TALLIED = [name for name, field in SuiteCounts.model_fields.items() if field.annotation is int]

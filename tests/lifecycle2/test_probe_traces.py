"""Probes that leave no trace: each probe's logged question is forgotten once it is scored,
where the engine can forget one write; where it cannot, the report says so."""

from __future__ import annotations

from memeval.engines.types import Pack, TurnContext
from memeval.scoring.kpis import kpis
from tests.lifecycle2.engines import Tiny, served
from tests.lifecycle2.helpers import run, scenario


def kept(result) -> float | None:  # type: ignore[no-untyped-def]
    return next(k.value for k in kpis([result]) if k.name == "probe_turns_kept")


class Remembers(Tiny):
    """Records the questions a tenant holds when each probe is asked."""

    name = "remembers"

    def __init__(self) -> None:
        super().__init__()
        self.held: list[list[str]] = []

    async def pre_turn(self, tenant: str, ctx: TurnContext) -> Pack:
        if ctx.turn.id and ctx.turn.id.startswith("probe-"):
            self.held.append([w.id for w in self._t(tenant).writes if w.id.startswith("probe-")])
        return await super().pre_turn(tenant, ctx)


def test_the_reference_engine_cannot_and_the_report_says_so() -> None:
    result = run(scenario("lifecycle", "brain_lookup"), "reference")
    logged = [p for p in result.probes if p.trace_removed is not None]
    assert logged and all(p.trace_removed is False for p in logged)
    assert kept(result) == 1.0


def test_an_engine_that_forgets_by_id_starts_every_probe_clean() -> None:
    remembers = Remembers()
    with served(remembers) as engine:
        result = run(scenario("lifecycle", "brain_lookup"), engine)
    assert kept(result) == 0.0
    assert remembers.held and all(not held for held in remembers.held)
    assert not any(t.step == "probe" and t.call == "forget_write" for t in result.timings)


def test_unlogged_probes_have_nothing_to_remove() -> None:
    with served(Tiny()) as engine:
        result = run(scenario("safety", "erase_personal_details"), engine)
    assert all(p.trace_removed is None for p in result.probes)
    assert kept(result) is None

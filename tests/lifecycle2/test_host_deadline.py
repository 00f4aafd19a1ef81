"""A host's deadline and pack limits (`--deadline`, `--pack-tokens`, `--pack-sections`): each
probe is scored again on the pack the host would really paste, and a late one is empty."""

from __future__ import annotations

from memeval.runner import RunOptions
from memeval.runner.host import HostLimits, host_view
from memeval.scoring.kpis import kpis
from tests.lifecycle2.engines import SlowPack, served
from tests.lifecycle2.helpers import run, scenario

PACK = (
    "# Memory\n\n## Learnings\n\n- use pnpm\n- deploy with make ship\n\n"
    "## Documents\n\n- refunds take 5 days\n"
)


def values(result) -> dict[str, float | None]:  # type: ignore[no-untyped-def]
    return {k.name: k.value for k in kpis([result])}


def test_a_late_pack_is_empty_and_limits_cut_from_the_end() -> None:
    assert host_view(PACK, 120.0, HostLimits(deadline_ms=100)) == ("", True)
    assert host_view(PACK, 80.0, HostLimits(deadline_ms=100)) == (PACK.rstrip("\n"), False)
    first, late = host_view(PACK, 1.0, HostLimits(pack_sections=1))
    assert not late and "use pnpm" in first and "refunds" not in first
    cut, _ = host_view(PACK, 1.0, HostLimits(pack_tokens=12))
    assert "use pnpm" in cut and "make ship" not in cut


def test_the_reference_engine_within_a_generous_deadline_loses_nothing() -> None:
    options = RunOptions(host=HostLimits(deadline_ms=30_000))
    result = run(scenario("lifecycle", "brain_lookup"), "reference", options)
    got = values(result)
    assert got["deadline_timeout_rate"] == 0.0
    assert got["host_pack_hit"] == got["pack_hit"]
    assert all(p.late is False for p in result.probes)


def test_the_reference_engine_under_a_tight_token_budget_loses_some_hits() -> None:
    options = RunOptions(host=HostLimits(pack_tokens=25, pack_sections=1))
    result = run(scenario("lifecycle", "brain_lookup"), "reference", options)
    got = values(result)
    assert got["deadline_timeout_rate"] is None, "no deadline, no timeout rate"
    assert got["host_pack_hit"] is not None and got["pack_hit"] is not None
    assert got["host_pack_hit"] < got["pack_hit"]


def test_an_engine_slower_than_the_deadline_gives_the_host_nothing() -> None:
    options = RunOptions(host=HostLimits(deadline_ms=150))
    with served(SlowPack()) as engine:
        result = run(scenario("lifecycle", "needle_in_noise"), engine, options)
    got = values(result)
    assert got["pack_hit"] == 1.0, "unbounded, its packs are right"
    assert got["deadline_timeout_rate"] == 1.0
    assert got["host_pack_hit"] == 0.0
    assert all(p.late and not p.host_hit for p in result.probes)

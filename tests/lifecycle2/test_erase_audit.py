"""The erase audit (`memeval run --suite safety`): canaries searched on every face after a
forget by id and a forget of the whole tenant, with isolation measured beside it."""

from __future__ import annotations

import pytest

from memeval.results import CaseResult, CheckStatus
from memeval.runner import RunOptions
from memeval.scoring.kpis import kpis
from tests.lifecycle2.engines import KeepsAfterForget, KeepsDerived, Tiny, served
from tests.lifecycle2.helpers import run, scenario

FACES = {"pack", "resume", "context", "answer", "listing", "derived", "beliefs"}


def kpi(result: CaseResult, name: str) -> float | None:
    return next(k.value for k in kpis([result]) if k.name == name)


def failed(result: CaseResult, mode: str) -> list[str]:
    return [e.face for e in result.erase if e.mode == mode and e.status is CheckStatus.failed]


@pytest.mark.parametrize("name", ["erase_personal_details", "erase_after_beliefs"])
def test_the_reference_engine_is_audited_on_every_face(name: str) -> None:
    result = run(scenario("safety", name), "reference")
    assert result.status.value == "done"
    assert all(p.hit for p in result.probes if p.scored), "the canaries were recallable first"
    faces = {e.face for e in result.erase if e.mode == "tenant"}
    assert faces == FACES | {"settled"}
    assert {e.face for e in result.erase if e.mode == "cross_tenant"} == FACES
    # It forgets only whole tenants, and the audit says so instead of skipping the step.
    by_id = [e for e in result.erase if e.mode == "by_id"]
    assert [(e.face, e.status) for e in by_id] == [("forget_write", CheckStatus.unsupported)]
    assert kpi(result, "forget_write_supported") == 0.0
    assert kpi(result, "erase_failures") == 0.0
    assert kpi(result, "cross_tenant_leaks") == 0.0


def test_an_engine_that_forgets_properly_passes_over_http() -> None:
    with served(Tiny()) as engine:
        result = run(scenario("safety", "erase_personal_details"), engine)
    assert all(p.hit for p in result.probes if p.scored)
    by_id = [e for e in result.erase if e.mode == "by_id"]
    assert {e.face for e in by_id} == FACES | {"settled"}, "forget_write ran over the wire"
    assert kpi(result, "erase_failures") == 0.0
    assert kpi(result, "forget_write_supported") == 1.0


def test_a_tombstone_that_keeps_recalling_fails_the_audit() -> None:
    with served(KeepsAfterForget()) as engine:
        result = run(scenario("safety", "erase_personal_details"), engine)
    assert set(failed(result, "tenant")) >= {"pack", "resume", "context"}
    assert "settled" not in failed(result, "tenant"), "its listing did go empty"
    found = {c for e in result.erase if e.mode == "tenant" for c in e.found}
    # The medication note went by id first, which this engine does honour.
    assert found == {"Larchwood Crescent", "4419-HERON", "Okonjo-Reyes", "Fernhill Primary"}
    assert (kpi(result, "erase_failures") or 0) > 0.2
    assert kpi(result, "cross_tenant_leaks") == 0.0


def test_facts_distilled_from_a_forgotten_write_must_go_with_it() -> None:
    with served(KeepsDerived()) as engine:
        result = run(scenario("safety", "erase_after_beliefs"), engine)
    assert failed(result, "by_id") == ["derived"]
    assert [e.found for e in result.erase if e.mode == "by_id" and e.face == "derived"] == [
        ["Saltmarsh"]
    ]


def test_a_shared_store_leaks_across_tenants() -> None:
    class OneStore(Tiny):
        name = "one-store"

        def _t(self, tenant: str):  # type: ignore[no-untyped-def]
            return super()._t("everyone")

    with served(OneStore()) as engine:  # its forget misses the shared store: settle briefly
        result = run(
            scenario("safety", "erase_personal_details"), engine, RunOptions(settle_timeout=1)
        )
    assert "pack" in failed(result, "cross_tenant")
    assert (kpi(result, "cross_tenant_leaks") or 0) > 0

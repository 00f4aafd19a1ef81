"""Engine tenant ids are built so that no two cases (or two tenants of one case) ever share one:
a slug may hold `.` and `-`, the characters the id joins its parts with, so they are escaped."""

from __future__ import annotations

import asyncio
from pathlib import Path

import yaml
from hypothesis import given
from hypothesis import strategies as st

from memeval.engines import registry
from memeval.runner import RunOptions, run_case
from memeval.runner.context import sub_tenant, tenant_base
from memeval.suites.scenario import Scenario
from tests.cli_here import run_cli_here

FIRST = """\
kind: scenario
name: s
title: Holds a secret on tenant p-0-a0.q
start: 2026-08-03
documents:
  - id: memo
    tenant: p-0-a0.q
    title: Deal memo
    text: Acme intends to acquire Larkspur Analytics, a startup in Utrecht.
probes:
  - id: own
    tenant: p-0-a0.q
    question: Which company is Acme acquiring?
    style: lexical
    expect: [Larkspur]
"""

SECOND = """\
kind: scenario
name: s-0-a0.p
title: Must never see the first scenario's secret
start: 2026-08-03
documents:
  - id: kitchen
    tenant: q
    title: Kitchen memo
    text: The kitchen closes every Friday afternoon for cleaning.
probes:
  - id: nothing-foreign
    tenant: q
    question: Which company is Acme acquiring in the deal memo?
    style: lexical
    scored: false
    forbidden: [Larkspur]
"""


def _scenario(text: str) -> Scenario:
    return Scenario.model_validate(yaml.safe_load(text))


def test_two_scenarios_whose_parts_line_up_get_different_engine_tenants() -> None:
    first, second = _scenario(FIRST), _scenario(SECOND)
    engine = registry.create("reference")

    async def both() -> list[str]:
        keep = RunOptions(keep=True)  # the first case's memories stay, as a slow forget leaves them
        await run_case(first, engine, run_id="r", options=keep)
        result = await run_case(second, engine, run_id="r", options=keep)
        return result.probes[0].leaked

    assert asyncio.run(both()) == []
    tenants = {sub_tenant(tenant_base("r", c.id, 0), t) for c in (first, second) for t in c.tenants}
    assert len(tenants) == 2, tenants


PART = st.text(alphabet="ab_.-/", min_size=1, max_size=6)


@given(st.lists(st.tuples(PART, PART, st.integers(0, 2), PART), min_size=2, max_size=2))
def test_tenant_ids_are_injective(parts: list[tuple[str, str, int, str]]) -> None:
    (r1, c1, t1, n1), (r2, c2, t2, n2) = parts
    same = sub_tenant(tenant_base(r1, c1, t1), n1) == sub_tenant(tenant_base(r2, c2, t2), n2)
    assert same == ((r1, c1, t1, n1) == (r2, c2, t2, n2))
    base1, base2 = tenant_base(r1, c1, t1), tenant_base(r2, c2, t2)
    assert base1 != sub_tenant(base2, n2)  # a case's own tenant is never another's sub-tenant


def test_suites_validate_reports_every_engine_tenant_distinct(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(FIRST, encoding="utf-8")
    (tmp_path / "b.yaml").write_text(SECOND, encoding="utf-8")
    done = run_cli_here("suites", "validate", str(tmp_path))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 engine tenants, all distinct" in done.stdout, done.stdout

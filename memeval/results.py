"""What a run produces: per-check, per-probe and per-case results, then the run's summary.

These models are the boundary between the runner, the store, the farm and the reports; the
JSON report is `RunReport` dumped whole.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field, field_validator

from memeval.engines.types import Usage


class Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Phase(StrEnum):
    recall = "recall"
    synthesis = "synthesis"


class CheckStatus(StrEnum):
    passed = "passed"
    failed = "failed"
    unsupported = "unsupported"  # the engine lacks the capability; counts as a fail
    error = "error"  # the engine raised; counts as a fail


class CaseStatus(StrEnum):
    done = "done"  # ran to the end; its score may be anything
    error = "error"  # infrastructure failed (engine unreachable...); resumable
    lost = "lost"  # a worker died and the watchdog gave up on it; resumable
    skipped_budget = "skipped_budget"
    skipped_credits = "skipped_credits"  # the engine's account ran out (402); resumable


class Timing(Model):
    step: str  # write, settle, probe, synthesise, forget
    call: str  # the engine method, e.g. pre_turn
    ms: float


class JudgeVerdict(Model):
    """One judge's word on one answer; the probe's `judge_ok` is the judges' majority."""

    model: str
    ok: bool | None  # None: the judge said neither word clearly
    note: str = ""  # the prompt id and the judge's reply


class ProbeResult(Model):
    probe: str
    phase: Phase
    via: str
    style: str
    scored: bool
    question: str
    expect: list[str]
    stale: list[str] = Field(default_factory=list)
    forbidden: list[str] = Field(default_factory=list)
    accept: list[str] = Field(default_factory=list)
    pack: str = ""
    pack_tokens: int = 0
    status: CheckStatus = CheckStatus.passed
    hit: bool = False
    rank: int | None = None  # 1-based unit of the first expected string; None when absent
    hit_rank: int | None = None  # 1-based unit by which every expected string has appeared
    fresh_first: bool | None = None  # None when the probe has no stale values
    stale_first: bool | None = None
    leaked: list[str] = Field(default_factory=list)
    extractive: str = ""
    extractive_ok: bool = False
    model_answer: str | None = None
    model_ok: bool | None = None
    model_tokens: int = 0  # prompt + completion tokens of the answering call
    model_usd_micros: int = 0
    captured: bool | None = None  # None when the engine cannot show what it derived
    error: str | None = None
    tags: list[str] = Field(default_factory=list)  # the probe's own tags, e.g. category:temporal
    abstain: bool = False  # the right answer is "never said"
    abstained: bool | None = None  # abstain probes: the pack was empty or marked abstained
    evidence: list[str] = Field(default_factory=list)  # write ids that hold the answer
    evidence_found: list[str] = Field(default_factory=list)  # of those, traced to a pack unit
    evidence_rank: int | None = None  # 1-based unit of the first evidence write; None: absent
    extractive_f1: float | None = None  # token F1 against the gold answer (SQuAD normalisation)
    model_f1: float | None = None
    judge_ok: bool | None = None  # the model judges' majority verdict on the model answer
    judge_note: str | None = None
    judges: list[JudgeVerdict] = Field(default_factory=list)  # each judge's own verdict
    late: bool | None = None  # with a host deadline: the pack came after it (None: no deadline)
    host_hit: bool | None = None  # with host limits: a hit on the pack the host would paste
    trace_removed: bool | None = None  # its logged question forgotten once scored (None: unlogged)

    @property
    def rr(self) -> float:
        return 1.0 / self.rank if self.rank else 0.0

    @property
    def evidence_recalled(self) -> bool | None:
        """Every evidence write has a unit in the pack; None when the probe names none."""
        if not self.evidence:
            return None
        return set(self.evidence) <= set(self.evidence_found)

    @property
    def evidence_rr(self) -> float:
        return 1.0 / self.evidence_rank if self.evidence_rank else 0.0


class CheckResult(Model):
    query: int
    kind: str
    value: str
    status: CheckStatus
    detail: str = ""

    @property
    def ok(self) -> bool:
        return self.status is CheckStatus.passed


class QueryLog(Model):
    query: int
    text: str
    as_of: datetime | None = None
    answer: str | None = None
    abstained: bool = False
    hits: list[str] = Field(default_factory=list)
    conflicts: int = 0
    acceptable_conflicts: int = 0  # of `conflicts`, those the query lists as acceptable
    tags: list[str] = Field(default_factory=list)
    pack: str = ""  # the hits as a model is shown them, kept so `memeval answer` can re-ask
    model_answer: str | None = None  # a model's answer from the hits, when the run has one
    model_ok: bool | None = None  # None when no check grades an answer's text
    model_tokens: int = 0
    model_usd_micros: int = 0


class EraseCheck(Model):
    """One face of the engine searched for what must not be there: an erase audit's canaries
    (`erase:`) or a loop guard's injected blocks (`echo_packs`).

    `mode` says what should have kept them out: `cross_tenant` (another tenant, before any
    forget), `by_id` (after `forget_write` of the writes that held them), `tenant` (after the
    whole tenant was forgotten and its listing had settled) or `loop_guard` (the engine's duty
    to drop the injected-context block from every write)."""

    mode: str
    face: str  # pack, resume, context, answer, listing, derived, beliefs, forget_write
    tenant: str  # the scenario's tenant name that was searched
    found: list[str] = Field(default_factory=list)  # canaries that came back
    status: CheckStatus = CheckStatus.passed
    detail: str = ""


class LagResult(Model):
    """Write-to-ranked for one probe's write: the time from the engine's ack of the write to
    the first pack for the probe's question holding what it expects, polled within a budget."""

    probe: str
    write: str
    ms: float | None = None  # None: no pack ranked it within the budget
    polls: int = 0


class UsageWindow(Model):
    """The engine's running totals read as a case started and as it ended.

    Totals, not deltas: cases share an engine (and a hosted account), so one case's delta
    also holds its neighbours' traffic. A run's spend is the union of its cases' windows
    (`memeval.scoring.spend`), which counts every overlap once and no idle gap at all.
    """

    before: Usage
    after: Usage


class CaseResult(Model):
    run_id: str
    case_id: str
    trial: int = 0
    kind: str  # scenario | fixture
    dimension: str | None = None
    engine: str
    tenant: str
    status: CaseStatus
    score: float | None = None  # fixture: share of checks passed; scenario: pack-hit share
    probes: list[ProbeResult] = Field(default_factory=list)
    checks: list[CheckResult] = Field(default_factory=list)
    erase: list[EraseCheck] = Field(default_factory=list)  # the erase audit, when the case has one
    lags: list[LagResult] = Field(default_factory=list)  # write-to-ranked, for `lag` probes
    queries: list[QueryLog] = Field(default_factory=list)
    timings: list[Timing] = Field(default_factory=list)
    beliefs_built: int = 0
    tags: list[str] = Field(default_factory=list)
    engine_usd_micros: int = 0  # within this case's window, neighbours' traffic included
    engine_usage: UsageWindow | None = None  # None: the engine reports no usage
    answerer_usd_micros: int = 0
    error: str | None = None
    started_at: datetime | None = None
    finished_at: datetime | None = None
    evaluated_at: datetime | None = None  # the pinned evaluation time the case ran at
    attempt: int = 0  # earlier attempts infrastructure broke off, each on its own tenant
    infra_retries: int = 0  # engine requests retried within this attempt (5xx, 429, timeout)
    capabilities: list[str] | None = None  # the engine's; None in results stored before


RENAMED_KPIS = {"planted_flagged": "conflict_pack_hit"}
"""Old KPI names in stored reports, by the name they go by now."""


class Kpi(Model):
    group: str
    name: str
    value: float | None
    unit: str
    better: str  # higher | lower
    n: int
    tag: str | None = None  # a probe tag (category:temporal): the KPI over those probes alone

    @field_validator("name", mode="before")
    @classmethod
    def _current_name(cls, value: object) -> object:
        """A report stored under an old name loads, and compares, under today's."""
        return RENAMED_KPIS.get(value, value) if isinstance(value, str) else value


class ModelUsed(Model):
    """A model a run's scores depend on, and the prompt it was given: a score means nothing
    without both."""

    model: str
    prompt_version: str


class RunReport(Model):
    run_id: str
    label: str
    engine: str
    suite: str
    subset: str | None = Field(
        default=None,
        description='The part of the suite the run planned, e.g. "temporal only"; None: all.',
    )
    started_at: datetime
    finished_at: datetime | None = None
    composite: float | None = None
    dimensions: dict[str, float | None] = Field(default_factory=dict)
    kpis: list[Kpi] = Field(default_factory=list)
    cases: list[CaseResult] = Field(default_factory=list)
    missing: list[str] = Field(default_factory=list, description="Cases with no result yet.")
    partial: bool = Field(
        default=False, description="The composite and KPIs leave out some planned cases."
    )
    unscored: list[str] = Field(
        default_factory=list,
        description="Planned cases left out of the score, as `case#trial (status)`: "
        "no result yet, lost, errored or skipped for budget.",
    )
    infra_retries: int = Field(
        default=0, description="Engine requests retried after an infrastructure failure."
    )
    case_restarts: int = Field(
        default=0, description="Cases infrastructure broke off, rerun on a fresh tenant."
    )
    overbilled_calls: int = Field(
        default=0, description="Model calls the service billed above their budget holds."
    )
    overbilled_usd_micros: int = Field(
        default=0, description="How much above their holds those calls were billed, in all."
    )
    answerer: ModelUsed | None = Field(
        default=None, description="The model that answered from the packs (--llm); None: none."
    )
    judge: ModelUsed | None = Field(default=None, description="The model that graded (--judge).")

    @property
    def overall_kpis(self) -> list[Kpi]:
        """The KPIs over every probe; per-tag records belong in a report's tag section."""
        return [k for k in self.kpis if k.tag is None]

"""What one case run needs besides the case and the engine: its tenant, options and clock."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from memeval.llm.rates import Rate
from memeval.llm.spec import LlmSpec
from memeval.results import CaseResult
from memeval.runner.host import HostLimits
from memeval.stopwatch import Stopwatch
from memeval.suites.fixture import Fixture
from memeval.suites.haystack import Haystack
from memeval.suites.scenario import Scenario

if TYPE_CHECKING:
    from memeval.llm.answer import Answerer, AnswerResult


class RunOptions(BaseModel):
    """Options that shape how a case runs; they travel inside task messages, so no secrets."""

    k: int = Field(default=5, ge=1, description="Hits asked of a fixture query.")
    settle_timeout: float = Field(default=30.0, gt=0, description="Seconds to wait for writes.")
    keep: bool = Field(default=False, description="Skip the forget step, to inspect the engine.")
    llm: LlmSpec | None = Field(
        default=None, description="A model answers every probe and query from the pack alone."
    )
    rates: list[Rate] = Field(
        default_factory=list, description="Global rate limits; the engine one throttles it."
    )
    refused_stop: int = Field(
        default=3,
        ge=0,
        description="Stop the run (exit 2) when its first N cases are refused alike; 0: never.",
    )
    host: HostLimits | None = Field(
        default=None,
        description="A host's deadline and pack limits: probes are also scored "
        "on the pack the host would really paste.",
    )
    haystack: Haystack | None = Field(
        default=None, description="The needle sweep the run's cases were expanded by (--noise)."
    )


_ESCAPES = {"_": "__", ".": "_d", "-": "_h", "/": "_s"}


def tenant_part(text: str) -> str:
    """`text` with `_ . - /` written as `__ _d _h _s`: the result holds no `.`, `-` or `/`,
    and no escape is a prefix of another, so a part can always be read back.

    Engine tenants join parts with `-` and `.`, and slugs may hold both, so without this a
    scenario `s` with tenant `p-0-a0.q` and a scenario `s-0-a0.p` with tenant `q` met on
    one engine tenant and saw each other's memories."""
    return "".join(_ESCAPES.get(ch, ch) for ch in text)


def tenant_base(run_id: str, case_id: str, trial: int, attempt: int = 0) -> str:
    """`{run}-{case}-{trial}-a{attempt}`, the case id escaped by `tenant_part`.

    Read from the right it is unambiguous whatever the run id holds: the last `-` opens the
    attempt, the one before the trial, the one before that the case. The attempt is part of it
    because a case that infrastructure broke off is retried from the start: on its own tenant,
    it cannot meet the writes (or the failed forget) of the attempt before, and its write keys
    cannot replay that attempt's answers."""
    return f"{run_id}-{tenant_part(case_id)}-{trial}-a{attempt}"


def sub_tenant(base: str, name: str) -> str:
    """A scenario tenant under its case's base tenant; `name` escaped, so the last `.` always
    opens it (a base's own dots are followed by a `-` somewhere, an escaped name never is)."""
    return f"{base}.{tenant_part(name)}"


def engine_tenants(cases: Iterable[Scenario | Fixture], run_id: str) -> dict[str, str]:
    """Every engine tenant a run of `cases` uses on its first trial and attempt, with the case
    that uses it; later trials and attempts differ only in their digits."""
    out: dict[str, str] = {}
    for case in cases:
        base = tenant_base(run_id, case.id, 0)
        names = (
            [sub_tenant(base, t) for t in case.tenants] if isinstance(case, Scenario) else [base]
        )
        for name in names:
            if name in out:
                raise ValueError(f"`{out[name]}` and `{case.id}` share engine tenant `{name}`")
            out[name] = case.id
    return out


class CaseContext:
    def __init__(
        self, result: CaseResult, options: RunOptions, answerer: Answerer | None = None
    ) -> None:
        self.result = result
        self.options = options
        self.watch = Stopwatch(writer=result.tenant)
        self.answerer = answerer
        self.answers_stopped: AnswerResult | None = None  # the reply that ended its model calls

    def tenant(self, name: str) -> str:
        """A scenario's tenants become siblings under the case's own tenant."""
        return sub_tenant(self.result.tenant, name)

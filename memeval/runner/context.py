"""What one case run needs besides the case and the engine: its tenant, options and clock."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from memeval.llm.rates import Rate
from memeval.llm.spec import LlmSpec
from memeval.results import CaseResult
from memeval.runner.host import HostLimits
from memeval.stopwatch import Stopwatch
from memeval.suites.haystack import Haystack

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


def tenant_base(run_id: str, case_id: str, trial: int, attempt: int = 0) -> str:
    """`{run}-{case}-{trial}-a{attempt}`, with the case id's slashes made path-safe.

    The attempt is part of it because a case that infrastructure broke off is retried from
    the start: on its own tenant, it cannot meet the writes (or the failed forget) of the
    attempt before, and its write keys cannot replay that attempt's answers."""
    return f"{run_id}-{case_id.replace('/', '.')}-{trial}-a{attempt}"


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
        return f"{self.result.tenant}.{name}"

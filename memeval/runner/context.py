"""What one case run needs besides the case and the engine: its tenant, options and clock."""

from __future__ import annotations

from pydantic import BaseModel, Field

from memeval.results import CaseResult
from memeval.stopwatch import Stopwatch


class RunOptions(BaseModel):
    """Options that shape how a case runs; they travel inside task messages, so no secrets."""

    k: int = Field(default=5, ge=1, description="Hits asked of a fixture query.")
    settle_timeout: float = Field(default=30.0, gt=0, description="Seconds to wait for writes.")
    keep: bool = Field(default=False, description="Skip the forget step, to inspect the engine.")


def tenant_base(run_id: str, case_id: str, trial: int) -> str:
    """`{run}-{case}-{trial}`, with the case id's slashes made path-safe."""
    return f"{run_id}-{case_id.replace('/', '.')}-{trial}"


class CaseContext:
    def __init__(self, result: CaseResult, options: RunOptions) -> None:
        self.result = result
        self.options = options
        self.watch = Stopwatch()

    def tenant(self, name: str) -> str:
        """A scenario's tenants become siblings under the case's own tenant."""
        return f"{self.result.tenant}.{name}"

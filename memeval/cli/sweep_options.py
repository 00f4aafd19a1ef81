"""`memeval sweep`'s options: declared once here (flag, type, help), parsed by typer, and handed
on whole as `SweepFlags`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from pydantic import BaseModel, field_validator

from memeval.evaluation.execution import Pool
from memeval.llm.prompt import MAX_TOKENS

Models = Annotated[str, typer.Option("--models", help="Comma-separated model ids.")]
BudgetUsd = Annotated[float, typer.Option(help="The most the whole sweep may spend.")]
Trials = Annotated[int, typer.Option(min=1, help="Run every case this many times.")]
Suite = Annotated[str, typer.Option(help="lifecycle, dimensions, all, or a path.")]
Engine = Annotated[str, typer.Option(help="Engine, when no --profile is given.")]
Profiles = Annotated[
    list[str] | None,
    typer.Option(help="Engine profile `NAME: --engine E --k N`, swept like a model."),
]
Only = Annotated[list[str] | None, typer.Option(help="Only this case id (repeatable).")]
Dimensions = Annotated[
    list[str] | None, typer.Option(help="Only fixtures of this dimension (repeatable).")
]
MaxTokens = Annotated[int, typer.Option(min=1, help="Completion cap per call.")]
Workers = Annotated[
    int | None,
    typer.Option(
        "--workers",
        "--concurrency",
        min=1,
        help="Local worker processes (or threads).",
        show_default="CPUs",
    ),
]
WorkerPool = Annotated[Pool, typer.Option(help="Local worker pool.")]
RedisUrl = Annotated[
    str | None,
    typer.Option(hidden=True, help="Ignored: budgets and limits live in the farm's Redis."),
]
JsonPath = Annotated[Path | None, typer.Option("--json", help="Write the sweep report here.")]
Verbose = Annotated[bool, typer.Option(help="Print each case as it lands.")]
DryRun = Annotated[
    bool, typer.Option(help="Print the expected model calls and dollars, then stop.")
]


class SweepFlags(BaseModel):
    """The options as typer parsed them, by parameter name."""

    models: str
    budget_usd: float
    trials: int = 1
    suite: str = "all"
    engine: str = "reference"
    profile: list[str] | None = None
    only: list[str] | None = None
    dimension: list[str] | None = None
    rate: list[str] | None = None
    price: list[str] | None = None
    base_url: str | None = None
    max_tokens: int = MAX_TOKENS
    workers: int | None = None
    pool: Pool = "prefork"
    redis_url: str | None = None
    json_path: Path | None = None
    verbose: bool = False
    dry_run: bool = False

    @field_validator("profile", "only", "dimension", "rate", "price", mode="before")
    @classmethod
    def _unset_is_none(cls, value: object) -> object:
        """Click reports a repeatable option given no times as `()`; typer passes None."""
        return value or None

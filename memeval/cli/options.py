"""Options that several commands take with one meaning, declared once so their help and
types cannot drift apart between `run`, `sweep`, `worker` and `estimate`.

A default that is not a literal value (a CPU count, an environment variable) is named with
`show_default`, never as `[default: ...]` inside the help, which rich help reads as markup
and drops."""

from __future__ import annotations

from typing import Annotated

import typer

BaseUrl = Annotated[
    str | None, typer.Option(help="OpenAI-compatible API.", show_default="OpenRouter")
]
Prices = Annotated[
    list[str] | None,
    typer.Option(
        help="MODEL=PROMPT/COMPLETION in USD per million tokens (repeatable).",
        show_default="OpenRouter's list",
    ),
]
ModelTimeout = Annotated[
    float | None,
    typer.Option(
        "--model-timeout",
        help="Seconds a model call may take; one that times out after it was sent counts at "
        "its hold.",
        show_default="MEMEVAL_MODEL_TIMEOUT, else 60",
    ),
]
Rates = Annotated[
    list[str] | None,
    typer.Option(
        help="Global rate limit, e.g. engine=20/s or model=60/m (repeatable).",
        show_default="none",
    ),
]
Workers = Annotated[
    int | None,
    typer.Option(help="Worker processes (or threads) on this machine.", show_default="CPUs"),
]

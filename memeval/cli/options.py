"""Options that several commands take with one meaning, declared once so their help and
types cannot drift apart between `run`, `sweep` and `estimate`."""

from __future__ import annotations

from typing import Annotated

import typer

BaseUrl = Annotated[str | None, typer.Option(help="OpenAI-compatible API. [default: OpenRouter]")]
Prices = Annotated[
    list[str] | None,
    typer.Option(help="MODEL=PROMPT/COMPLETION in USD per million tokens (repeatable)."),
]
ModelTimeout = Annotated[
    float | None,
    typer.Option(
        "--model-timeout",
        help="Seconds a model call may take; one that times out after it was sent counts at "
        "its hold. (default: MEMEVAL_MODEL_TIMEOUT, else 60)",
    ),
]
Rates = Annotated[
    list[str] | None,
    typer.Option(help="Global rate limit, e.g. engine=20/s or model=60/m (repeatable)."),
]

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
Rates = Annotated[
    list[str] | None,
    typer.Option(help="Global rate limit, e.g. engine=20/s or model=60/m (repeatable)."),
]

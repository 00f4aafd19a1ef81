"""`memeval estimate`: the calls, tokens and dollars a model run will take, before any is spent."""

from __future__ import annotations

import asyncio
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from memeval.cli.options import BaseUrl, Prices
from memeval.evaluation.selection import chosen
from memeval.llm.client import LlmClient
from memeval.llm.estimate import PACK_TOKENS, ModelEstimate, estimate, planned_calls
from memeval.llm.pricing import Price, model_list, resolve_prices
from memeval.llm.prompt import MAX_TOKENS
from memeval.llm.setup import base_url_of, budget_micros, parse_models, user_prices
from memeval.suites.catalog import stream

out = Console()


def estimate_command(
    models: Annotated[str, typer.Option("--models", "--model", help="Comma-separated model ids.")],
    suite: Annotated[str, typer.Option(help="lifecycle, dimensions, all, or a path.")] = "all",
    only: Annotated[list[str] | None, typer.Option(help="Only this case id (repeatable).")] = None,
    dimension: Annotated[
        list[str] | None, typer.Option(help="Only fixtures of this dimension (repeatable).")
    ] = None,
    limit: Annotated[
        int | None, typer.Option(help="Only the first N cases the selection holds.")
    ] = None,
    trials: Annotated[int, typer.Option(min=1, help="Every case this many times.")] = 1,
    profiles: Annotated[
        int, typer.Option("--profiles", min=1, help="Engine profiles a sweep would run.")
    ] = 1,
    k: Annotated[int, typer.Option(min=1, help="Hits asked of a fixture query.")] = 5,
    max_tokens: Annotated[int, typer.Option(min=1, help="Completion cap per call.")] = MAX_TOKENS,
    pack_tokens: Annotated[
        int, typer.Option(min=1, help="Assumed largest pack, in tokens.")
    ] = PACK_TOKENS,
    price: Prices = None,
    base_url: BaseUrl = None,
    budget_usd: Annotated[
        float | None, typer.Option(help="Say how much of the work this budget covers.")
    ] = None,
) -> None:
    """Print the expected model calls, tokens and dollars per model; nothing is spent."""
    names = parse_models(models)
    cap = budget_micros(budget_usd)
    # Read as it goes: a benchmark file's cases are never all held, only their planned calls.
    cases = chosen(stream(suite), only or [], dimension or [], limit)
    calls = planned_calls(cases, k=k, pack_tokens=pack_tokens)
    prices, listed = asyncio.run(_prices(names, base_url, price or []))
    rows = estimate(calls, trials=trials * profiles, prices=prices, max_tokens=max_tokens)
    print_estimates(rows, prices, out, unlisted=None if listed else base_url_of(base_url))
    if cap is not None:
        print_coverage(rows, cap, out)


async def _prices(
    models: list[str], base_url: str | None, texts: list[str]
) -> tuple[dict[str, Price | None], bool]:
    """The prices, and whether the service's price list was at hand (fetched or cached) for
    the models `--price` leaves out: offline, "unpriced" alone would read as "free"."""
    client = LlmClient(base_url_of(base_url), require_key=False)
    given = user_prices(texts)
    try:
        prices = await resolve_prices(models, client, given, need_prices=False)
        wanted = any(m not in given for m in models)
        return prices, not wanted or await model_list(client) is not None
    finally:
        await client.aclose()


def print_estimates(
    rows: list[ModelEstimate],
    prices: dict[str, Price | None],
    console: Console,
    *,
    unlisted: str | None = None,
) -> None:
    """`unlisted`: the service whose price list could not be fetched, if it could not."""
    table = Table(title="estimate (before anything is spent)")
    for column in (
        "model",
        "price",
        "calls",
        "prompt tok",
        "completion tok",
        "expected",
        "at most",
    ):
        table.add_column(column, justify="left" if column in ("model", "price") else "right")
    for row in rows:
        price = prices[row.model]
        table.add_row(
            row.model,
            price.per_million() if price else "unpriced",
            f"{row.calls:,}",
            f"{row.prompt_tokens:,}",
            f"{row.completion_tokens_expected:,} (≤{row.completion_tokens_max:,})",
            _usd(row.usd_expected),
            _usd(row.usd_max),
        )
    if len(rows) > 1:
        table.add_row(
            "[bold]all[/]",
            "",
            f"{sum(r.calls for r in rows):,}",
            f"{sum(r.prompt_tokens for r in rows):,}",
            f"{sum(r.completion_tokens_expected for r in rows):,}",
            _usd(_total([r.usd_expected for r in rows])),
            _usd(_total([r.usd_max for r in rows])),
        )
    console.print(table)
    if any(p is None for p in prices.values()):
        why = f"the price list of {unlisted} could not be fetched; " if unlisted else ""
        console.print(
            f"unpriced models: {why}give --price MODEL=PROMPT/COMPLETION to see dollars",
            highlight=False,
        )


def print_coverage(rows: list[ModelEstimate], cap_micros: int, console: Console) -> None:
    expected = _total([r.usd_expected for r in rows])
    if expected is None or expected == 0:
        return
    share = min(1.0, cap_micros / 1e6 / expected)
    console.print(
        f"budget ${cap_micros / 1e6:.2f}: covers about {share:.0%} of the expected "
        f"${expected:.2f}" + ("" if share >= 1 else "; the rest would be skipped_budget")
    )


def _total(values: list[float | None]) -> float | None:
    return None if any(v is None for v in values) else sum(v or 0.0 for v in values)


def _usd(value: float | None) -> str:
    return "?" if value is None else f"${value:,.4f}"

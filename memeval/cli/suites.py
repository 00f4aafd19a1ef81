"""`memeval suites`: list, validate and describe suites."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from memeval.errors import UsageError
from memeval.importers import sources
from memeval.runner.context import engine_tenants
from memeval.suites.catalog import count, located
from memeval.suites.fixture import Fixture
from memeval.suites.loader import document_schema, load_paths
from memeval.suites.scenario import Scenario
from memeval.summary import plural

app = typer.Typer(help="List, validate and describe suites.", no_args_is_help=True)
out = Console()


@app.command("list")
def list_(
    suite: Annotated[
        str, typer.Option(help="lifecycle, dimensions, all, locomo:PATH, longmemeval:PATH, a path.")
    ] = "all",
    as_json: Annotated[
        bool, typer.Option("--json", metavar="", help="Print the counts as JSON.")
    ] = False,
    cases: Annotated[
        bool, typer.Option("--cases", metavar="", help="Also list every case id.")
    ] = False,
) -> None:
    """Count what a suite holds: scenarios, scored probes by style, fixtures per dimension.

    The suite is read once, a case at a time, so a benchmark file of any size is counted in
    the memory of one case; `--cases` prints each id as it is read, before the counts."""
    name, items = located(suite)
    ids: list[str] = []

    def listed() -> Iterator[Scenario | Fixture]:
        for item in items:
            if cases and as_json:
                ids.append(item.case.id)
            elif cases:
                out.print(f"{item.case.id}  [dim]{item.path}[/]", highlight=False)
            yield item.case

    counts = count(listed())
    if as_json:
        data = counts.model_dump() | ({"cases": ids} if cases else {})
        print(json.dumps(data, indent=2))
        return
    table = Table(title=f"suite: {name}", show_header=False)
    table.add_row("scenarios", str(counts.scenarios))
    table.add_row("probes scored", str(counts.probes_scored))
    table.add_row("  lexical / paraphrase", f"{counts.lexical} / {counts.paraphrase}")
    table.add_row("  with stale values", str(counts.stale))
    table.add_row("leak checks", str(counts.leak_checks))
    table.add_row("  abstain / with evidence", f"{counts.abstain} / {counts.with_evidence}")
    for tag, n in counts.probe_tags.items():
        table.add_row(f"  tag {tag}", str(n))
    table.add_row("fixtures", str(counts.fixtures))
    for dim, n in counts.fixtures_per_dimension.items():
        table.add_row(f"  {dim}", str(n))
    out.print(table)


@app.command()
def validate(
    paths: Annotated[list[Path], typer.Argument(help="Files or folders of suite YAML.")],
) -> None:
    """Check user-written suite files; exit code 2 and a located message on the first error."""
    loaded = load_paths(paths)
    try:
        tenants = engine_tenants((c.case for c in loaded), run_id="RUN")
    except ValueError as exc:  # unreachable while tenant ids are escaped; said plainly if not
        raise UsageError(str(exc), fix="rename one of the two cases") from None
    out.print(
        f"[green]ok[/]: {plural(len(loaded), 'case')} in "
        f"{plural(len({c.path for c in loaded}), 'file')}, "
        f"{plural(len(tenants), 'engine tenant')}, all distinct"
    )


@app.command()
def schema() -> None:
    """Print the JSON Schema of one suite document (a scenario, a fixture or suite settings)
    for editors."""
    print(json.dumps(document_schema(), indent=2))


@app.command("import")
def import_(
    benchmark: Annotated[str, typer.Argument(help="locomo or longmemeval.")],
    path: Annotated[Path, typer.Argument(help="Your local copy of the benchmark's file.")],
    out_dir: Annotated[Path, typer.Option("--out", help="Folder to write the cases into.")],
    categories: Annotated[
        str | None,
        typer.Option(
            help="LoCoMo: the categories counted overall, e.g. 1,2,3,4,5; the others are "
            "reported apart.",
            show_default="1-4",
        ),
    ] = None,
) -> None:
    """Write a public benchmark's cases as YAML files, to read them or run them as a folder."""
    query = f"?categories={categories}" if categories is not None else ""
    source = sources.parse(f"{benchmark}:{path}{query}")
    if source is None:
        raise UsageError(
            f"unknown benchmark `{benchmark}`", fix=f"use one of: {', '.join(sources.BENCHMARKS)}"
        )
    written = sources.write(sources.load(*source), out_dir)
    out.print(f"[green]wrote[/] {plural(len(written), 'case')} to {out_dir}")

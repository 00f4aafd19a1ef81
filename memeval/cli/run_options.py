"""`memeval run`'s options: declared once here (flag, type, help), parsed by typer, and handed
on whole as `RunFlags`, which turns them into what the run layer takes."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from pydantic import BaseModel, ValidationError, field_validator

from memeval.engines.registry import with_options
from memeval.errors import UsageError
from memeval.evaluation.execution import Pool
from memeval.evaluation.models import DEFAULT_MODEL, ModelOptions
from memeval.evaluation.outputs import Outputs
from memeval.evaluation.planning import RunRequest
from memeval.llm.judge import JudgeMode
from memeval.runner.host import HostLimits
from memeval.suites.haystack import Haystack, parse_needles, parse_sizes

Engine = Annotated[
    str | None,
    typer.Option(help="Engine to evaluate: reference, naive, ...", show_default="reference"),
]
Url = Annotated[
    str | None, typer.Option(help="Base URL of the engine's service (e.g. for --engine http).")
]
EnrichWait = Annotated[
    float | None,
    typer.Option(help="cortex, tinyhumans: most seconds to wait for enrichment to drain."),
]
Suite = Annotated[
    str | None,
    typer.Option(help="lifecycle, dimensions, safety, all, or a path.", show_default="all"),
]
Label = Annotated[str | None, typer.Option(help="Name for this run in reports.")]
Only = Annotated[list[str] | None, typer.Option(help="Run only this case id (repeatable).")]
Dimensions = Annotated[
    list[str] | None, typer.Option(help="Run only fixtures of this dimension (repeatable).")
]
Limit = Annotated[
    int | None,
    typer.Option(
        help="Run only the first N cases the selection holds (a slice of a large benchmark).",
        show_default=False,
    ),
]
Trials = Annotated[int | None, typer.Option(help="Run every case this many times.")]
Keep = Annotated[bool, typer.Option(help="Skip the forget step, to inspect the engine.")]
Verbose = Annotated[bool, typer.Option(help="Print each case as it lands.")]
WorkerPool = Annotated[Pool, typer.Option(help="Local worker pool.")]
Detach = Annotated[
    bool, typer.Option(help="Dispatch, print the run id and return (needs a broker).")
]
Resume = Annotated[
    str | None,
    typer.Option(
        help="Send a run's missing, lost and errored cases again: its id, label or `latest`.",
        metavar="RUN",
    ),
]
InProcess = Annotated[
    bool, typer.Option("--in-process", help="Debug: run in this process, no farm.")
]
OutDir = Annotated[
    Path | None,
    typer.Option("--out", help="Report folder.", show_default="./memeval-runs/<label>/"),
]
JsonPath = Annotated[Path | None, typer.Option("--json", help="Also write the JSON report here.")]
MdPath = Annotated[Path | None, typer.Option("--md", help="Also write the markdown report here.")]
Llm = Annotated[
    bool, typer.Option("--llm", help="A model answers every probe and query from its pack.")
]
Model = Annotated[str | None, typer.Option(help="The answering model.", show_default=DEFAULT_MODEL)]
Judge = Annotated[
    list[str] | None,
    typer.Option(
        help="With --llm: this model grades every answer against the gold one, on the "
        "same budget (KPI judge_answer; prompts judge-v2). Repeat for a majority of judges.",
        metavar="MODEL",
    ),
]
JudgeModeOption = Annotated[
    JudgeMode,
    typer.Option(
        "--judge-mode",
        help="strict: the same fact; lenient: any answer on the right topic, as Mem0's "
        "published evaluation grades.",
    ),
]
MaxTokens = Annotated[int | None, typer.Option(help="Completion cap per answer.")]
BudgetUsd = Annotated[
    float | None, typer.Option(help="Most the answering model may spend on this run.")
]
DryRun = Annotated[
    bool, typer.Option(help="Print the expected model calls and dollars, then stop.")
]
Deadline = Annotated[
    float | None,
    typer.Option(
        help="A host's wait for each probe's pack, in ms: a later pack counts as empty "
        "(KPIs host_pack_hit, deadline_timeout_rate).",
        metavar="MS",
    ),
]
PackTokens = Annotated[
    int | None, typer.Option(help="A host's token budget for the pack: lines past it are cut.")
]
PackSections = Annotated[
    int | None, typer.Option(help="A host keeps only the pack's first N `##` sections.")
]
NoiseSizes = Annotated[
    str | None,
    typer.Option(
        "--noise",
        help="Pad every scenario's tenants to each size, one case per size (e.g. 100,1000).",
        metavar="SIZES",
    ),
]
Needle = Annotated[
    str | None,
    typer.Option(
        help="With --noise: where the scenario's writes sit among the distractors "
        "(early,middle,late); one case per position.",
        metavar="POSITIONS",
    ),
]
Seed = Annotated[int | None, typer.Option(help="With --noise: the distractors' seed.")]


class ModelFlags(BaseModel):
    """The model and report options `run` and `answer` share, as typer parsed them."""

    out_dir: Path | None
    json_path: Path | None
    md_path: Path | None
    llm: bool = True
    model: str | None
    judge: list[str] | None
    judge_mode: JudgeMode = JudgeMode.strict
    base_url: str | None
    max_tokens: int | None
    budget_usd: float | None
    price: list[str] | None
    rate: list[str] | None
    model_timeout: float | None

    @field_validator("price", "rate", "judge", mode="before")
    @classmethod
    def _none_given(cls, value: object) -> object:
        """Click reports a repeatable option given no times as `()`; typer passes None."""
        return value or None

    def models(self) -> ModelOptions:
        return ModelOptions(
            llm=self.llm,
            model=self.model,
            judge=self.judge or [],
            judge_mode=self.judge_mode,
            base_url=self.base_url,
            max_tokens=self.max_tokens,
            prices=self.price or [],
            rates=self.rate or [],
            budget_usd=self.budget_usd,
            model_timeout=self.model_timeout,
        )

    def outputs(self) -> Outputs:
        return Outputs(out_dir=self.out_dir, json_path=self.json_path, md_path=self.md_path)


class RunFlags(ModelFlags):
    """The options as typer parsed them, by parameter name."""

    engine: str | None
    url: str | None
    enrich_wait: float | None
    suite: str | None
    label: str | None
    only: list[str] | None
    dimension: list[str] | None
    trials: int | None
    keep: bool
    limit: int | None = None
    verbose: bool
    workers: int | None
    pool: Pool
    detach: bool
    resume: str | None
    in_process: bool
    dry_run: bool
    fail_under: float | None
    fail_on_regression: str | None
    deadline: float | None = None
    pack_tokens: int | None = None
    pack_sections: int | None = None
    noise: str | None = None
    needle: str | None = None
    seed: int | None = None

    @field_validator("only", "dimension", mode="before")
    @classmethod
    def _unset_is_none(cls, value: object) -> object:
        """Click reports a repeatable option given no times as `()`; typer passes None."""
        return value or None

    def request(self) -> RunRequest:
        # `--engine ""` is a mistake to report, not a request for the default engine.
        engine = "reference" if self.engine is None else self.engine
        return RunRequest(
            engine=with_options(engine, url=self.url, enrich_wait=self.enrich_wait),
            suite=self.suite or "all",
            only=self.only or [],
            dimension=self.dimension or [],
            limit=self.limit,
            trials=self.trials,
            keep=self.keep,
            label=self.label,
            models=self.models(),
            host=self.host(),
            haystack=self.haystack(),
        )

    def host(self) -> HostLimits | None:
        given = (self.deadline, self.pack_tokens, self.pack_sections)
        if all(v is None for v in given):
            return None
        try:
            return HostLimits(
                deadline_ms=self.deadline,
                pack_tokens=self.pack_tokens,
                pack_sections=self.pack_sections,
            )
        except ValidationError as exc:
            first = exc.errors()[0]
            flag = {"deadline_ms": "deadline"}.get(str(first["loc"][0]), str(first["loc"][0]))
            raise UsageError(
                f"--{flag.replace('_', '-')}: {first['msg']}", fix="give a positive number"
            ) from None

    def haystack(self) -> Haystack | None:
        if self.noise is None:
            if self.needle is not None or self.seed is not None:
                raise UsageError(
                    "--needle and --seed shape the distractors of --noise",
                    fix="add --noise SIZES (e.g. --noise 100,1000,10000)",
                )
            return None
        needles = parse_needles(self.needle) if self.needle is not None else []
        return Haystack(sizes=parse_sizes(self.noise), needles=needles, seed=self.seed or 0)

    def names_a_new_run(self) -> bool:
        """Whether any option only a new run takes is given: a resume runs with the options
        its run was given."""
        given = (self.engine, self.url, self.enrich_wait, self.suite, self.label, self.only)
        shaped = (self.deadline, self.pack_tokens, self.pack_sections, self.noise, self.needle)
        picked = (self.dimension, self.limit, self.trials)
        return any(v is not None for v in (*given, *picked, *shaped)) or (
            self.keep or self.seed is not None
        )

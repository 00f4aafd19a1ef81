"""What `memeval run` prints for a run of one dimension: what is starting, pass or FAIL per
case, a composite named for its subset, and a re-used label that keeps the earlier reports."""

from __future__ import annotations

import json
import re

from memeval.report.markdown import render
from memeval.report.numbers import DASH, kpi_number, number
from memeval.results import Kpi
from tests.cli_here import run_cli_here
from tests.report.factory import make_report

CASE_LINE = re.compile(r"^(pass|FAIL|error|lost) +(\d\.\d\d|–)  dimensions/temporal/\S+#0$")


def test_a_one_dimension_run_says_what_starts_and_how_each_case_went(cli, tmp_path):
    args = ("run", "--engine", "naive", "--dimension", "temporal", "--verbose", "--label", "nv")
    first = cli(*args, "--workers", "2", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    lines = first.stdout.splitlines()
    # Said at once, before the farm's seconds of start-up, not after; a log (not a terminal)
    # first names the run, so a run killed mid-way can be resumed from it.
    assert re.fullmatch(r"run (\S+): if it stops, `memeval run --resume \1`", lines[0])
    assert lines[1] == "starting the embedded farm: redis + 2 workers…"
    assert lines[2] == "dispatching 10 cases…"
    cases = [line for line in lines if CASE_LINE.match(line)]
    assert len(cases) == 10
    assert any(line.startswith("FAIL ") for line in cases)  # naive misses temporal checks
    assert not any(line.lstrip().startswith("done") for line in lines)
    assert "composite (temporal only)" in first.stdout
    md = (tmp_path / "memeval-runs" / "nv" / "report.md").read_text()
    assert "**Composite (temporal only) " in md
    # The same label again: a new label, the first run's reports kept. Labels are given when
    # the run is planned, before the cases go anywhere, so this run needs no farm of its own.
    second = cli(*args, "--in-process", cwd=tmp_path)
    assert second.returncode == 0, second.stderr
    assert "label nv-2" in second.stdout
    assert "label `nv` is taken: this run is `nv-2`" in second.stdout
    assert (tmp_path / "memeval-runs" / "nv-2" / "report.md").is_file()
    assert (tmp_path / "memeval-runs" / "nv" / "report.md").read_text() == md


def test_a_run_of_chosen_cases_names_them_wherever_its_scores_show(cli, tmp_path):
    """Cases picked with --only may span every dimension: the run still is not the suite."""
    picked = ("dimensions/temporal/cfo_on_date", "dimensions/conflict/gross_margin_restated")
    only = [arg for case in picked for arg in ("--only", case.rsplit("/", 1)[1])]
    done = cli("run", "--suite", "dimensions", *only, "--in-process", "--label", "two",
               cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "composite (2 cases only)" in done.stdout
    listed = run_cli_here("runs", "--json", cwd=tmp_path)
    (run,) = json.loads(listed.stdout)
    assert run["subset"] == "2 cases only"


def test_one_form_per_unit():
    shown = [
        number(0.58, "share"),
        number(0.7817, "score"),
        number(357.098, "tokens"),
        number(370.0, "tokens"),
        number(1.1251, "ms"),
        number(0.674, "ms"),
        number(12.43, "ms"),
        number(1234.5, "ms"),
        number(0.0015, "usd"),
        number(0.000012, "usd"),
        number(12.5, "usd"),
        number(None, "ms"),
    ]
    assert shown == [
        "58.0%",
        "0.782",
        "357.1 tokens",
        "370 tokens",
        "1.13 ms",
        "0.674 ms",
        "12.4 ms",
        "1234 ms",
        "$0.0015",
        "$0.000012",
        "$12.5000",
        DASH,
    ]


def _kpi(name: str, value: float | None, unit: str = "usd", n: int = 3) -> Kpi:
    return Kpi(group="cost", name=name, value=value, unit=unit, better="lower", n=n)


def test_spend_nobody_measured_shows_a_dash():
    no_model = [_kpi("engine_usd", None), _kpi("answerer_usd", 0.0), _kpi("usd_per_correct", 0.0)]
    assert [kpi_number(k, no_model) for k in no_model] == [DASH, DASH, DASH]
    model = Kpi(
        group="accuracy", name="model_answer", value=0.0, unit="share", better="higher", n=4
    )
    paid = [model, _kpi("answerer_usd", 0.0015), _kpi("usd_per_correct", None, n=0)]
    assert [kpi_number(k, paid) for k in paid] == ["0.0%", "$0.0015", DASH]
    # A priced engine without a model: its cost per correct answer is real.
    engine = [_kpi("engine_usd", 0.02), _kpi("answerer_usd", 0.0), _kpi("usd_per_correct", 0.001)]
    assert [kpi_number(k, engine) for k in engine] == ["$0.0200", DASH, "$0.0010"]


def test_the_markdown_report_uses_the_same_forms():
    md = render(make_report(label="fmt", seed=7))
    kpis = {
        row.split("|")[2].strip(): row.split("|")[3].strip()
        for row in md.split("## KPIs")[1].splitlines()
        if row.startswith("| ") and "kpi" not in row
    }
    assert kpis["answerer_usd"] == DASH and kpis["usd_per_correct"] == DASH
    assert re.fullmatch(r"0\.\d{3}", kpis["mrr"])
    assert re.fullmatch(r"\d+(\.\d)? tokens", kpis["pack_tokens"])
    assert re.fullmatch(r"\d\.\d\d ms|\d\d\.\d ms|\d\.\d\d\d ms|\d+ ms", kpis["probe_p50"])


def test_worker_takes_workers_like_run_and_sweep_and_keeps_its_old_name():
    shown = run_cli_here("worker", "--help", env={"COLUMNS": "160"})
    assert shown.returncode == 0, shown.stderr
    assert "--workers" in shown.stdout and "[default: (CPUs)]" in shown.stdout
    assert "--concurrency" not in shown.stdout  # a hidden alias, still accepted
    broker = {"MEMEVAL_BROKER_URL": "redis://127.0.0.1:6379/15"}
    for name in ("--workers", "--concurrency"):
        refused = run_cli_here("worker", name, "0", env=broker)
        assert refused.returncode == 2, refused.stderr
        assert "--workers must be at least 1, not 0" in refused.stderr


def test_help_shows_every_default_and_no_bool_placeholder_on_flags():
    compare = run_cli_here("compare", "--help", env={"COLUMNS": "200"}).stdout
    for default in (
        "[default: (the first given)]",
        "[default: label]",
        "[default: 2000]",
        "[default: (MEMEVAL_DATABASE_URL, else ./memeval-runs/memeval.db)]",
    ):
        assert default in compare, default
    flag = next(line for line in compare.splitlines() if "--fail-on-regression" in line)
    assert "<bool>" not in flag and "--no-fail-on-regression" not in flag
    runs_help = run_cli_here("runs", "--help").stdout
    runs = next(line for line in runs_help.splitlines() if "--json" in line)
    assert "<bool>" not in runs


def _helps() -> dict[str, str]:
    """Every command's and subcommand's help, as a user at a wide terminal sees it."""
    from typer.testing import CliRunner

    from memeval.cli import COMMANDS, app

    runner = CliRunner(env={"COLUMNS": "200"})
    shown = {"": runner.invoke(app, ["--help"]).output}
    for name in COMMANDS:
        shown[name] = runner.invoke(app, [name, "--help"]).output
    for group in ("suites", "models"):
        for line in shown[group].splitlines():
            words = line.strip("│ ").split()
            if words and words[0].isidentifier() and words[0] not in ("Usage:",):
                sub = runner.invoke(app, [group, words[0], "--help"])
                if sub.exit_code == 0:
                    shown[f"{group} {words[0]}"] = sub.output
    return shown


def test_no_help_anywhere_gives_a_flag_a_value_placeholder():
    helps = _helps()
    assert len(helps) > len(("", "run", "suites validate")) + 10
    for name, text in helps.items():
        assert "<bool>" not in text, f"memeval {name} --help"
        assert "--help" in text, f"memeval {name} --help printed no help"


def test_run_help_shows_the_defaults_it_used_to_hide_in_its_help_text():
    run = _helps()["run"]
    for default in (
        "[default: (reference)]",
        "[default: (all)]",
        "[default: (CPUs)]",
        "[default: (./memeval-runs/<label>/)]",
    ):
        assert default in run, default
    assert "[default: (" in _helps()["sweep"]

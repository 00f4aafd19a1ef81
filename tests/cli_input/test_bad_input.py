"""Bad input gets exit code 2, one message naming the option, variable or file, and no run.

Each case runs the CLI as a user would: a few as `python -m memeval` processes, the rest through
the function that process calls, in this one. Nothing here may reach a farm, a model or an
engine: bad input has to fail before workers start, which is also what keeps these tests fast.
URLs that must never connect point at port 9 on the loopback.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from memeval.store import open_store
from tests.cli_here import run_cli_here
from tests.conftest import run_cli

BAD_INPUT = 2
NOWHERE = "http://127.0.0.1:9"

# Variables a developer's shell may set that would change which check fires first.
CLEARED = (
    "MEMEVAL_BROKER_URL",
    "MEMEVAL_RESULT_BACKEND",
    "MEMEVAL_NAMESPACE",
    "MEMEVAL_LLM_BASE_URL",
    "MEMEVAL_REDIS_URL",
    "MEMEVAL_HTTP_URL",
    "MEMEVAL_HTTP_TOKEN",
    "MEMEVAL_SERVE_TOKEN",
    "MEMEVAL_FLOWER_BASIC_AUTH",
    "OPENROUTER_API_KEY",
    "MEMEVAL_LLM_KEY",
    "CORTEX_API_KEY",
)

# (id, arguments, extra environment, fragments the message must hold); `{tmp}` is the test's
# folder, holding the files `inputs` writes.
CASES: list[tuple[str, list[str], dict[str, str], list[str]]] = [
    ("run-trials-zero", ["run", "--trials", "0"], {}, ["--trials", "at least 1"]),
    ("run-trials-word", ["run", "--trials", "abc"], {}, ["--trials"]),
    ("run-workers-negative", ["run", "--workers", "-1"], {}, ["--workers"]),
    ("run-engine-unknown", ["run", "--engine", "nosuch"], {}, ["unknown engine `nosuch`"]),
    ("run-engine-empty", ["run", "--engine", ""], {}, ["names no engine"]),
    ("run-engine-option", ["run", "--engine", "cortex?colour=blue"], {}, ["`colour`", "fix:"]),
    ("run-engine-takes-none", ["run", "--url", NOWHERE], {}, ["`reference` takes no options"]),
    ("run-url-ftp", ["run", "--engine", "http", "--url", "ftp://127.0.0.1:9"], {}, ["`url`"]),
    (
        "run-url-no-scheme",
        ["run", "--engine", "http", "--url", "127.0.0.1:9"],
        {"MEMEVAL_HTTP_TOKEN": "t"},
        ["`url`", "http(s)"],
    ),
    (
        "run-url-space",
        ["run", "--engine", "http", "--url", "http://127.0.0 .1:9"],
        {"MEMEVAL_HTTP_TOKEN": "t"},
        ["`url`", "contains a space"],
    ),
    ("run-key-missing", ["run", "--engine", "cortex", "--url", NOWHERE], {}, ["CORTEX_API_KEY"]),
    (
        "run-key-blank",
        ["run", "--engine", "cortex", "--url", NOWHERE],
        {"CORTEX_API_KEY": " "},
        ["CORTEX_API_KEY", "set to nothing"],
    ),
    (
        "run-enrich-wait-negative",
        ["run", "--engine", "cortex", "--url", NOWHERE, "--enrich-wait", "-1"],
        {"CORTEX_API_KEY": "k"},
        ["enrich_wait"],
    ),
    ("run-budget-negative", ["run", "--llm", "--budget-usd", "-1"], {}, ["--budget-usd"]),
    ("run-budget-nan", ["run", "--llm", "--budget-usd", "nan"], {}, ["--budget-usd"]),
    ("run-budget-without-llm", ["run", "--budget-usd", "5"], {}, ["--budget-usd", "--llm"]),
    ("run-max-tokens-zero", ["run", "--llm", "--max-tokens", "0"], {}, ["--max-tokens"]),
    ("run-fail-under-above-one", ["run", "--fail-under", "2"], {}, ["--fail-under"]),
    ("run-rate-malformed", ["run", "--rate", "foo"], {}, ["rate `foo`", "engine=20/s"]),
    ("run-rate-zero", ["run", "--rate", "engine=0/s"], {}, ["engine=0/s"]),
    ("run-price-malformed", ["run", "--llm", "--price", "foo"], {}, ["price `foo`"]),
    ("run-llm-key-missing", ["run", "--llm"], {}, ["OPENROUTER_API_KEY"]),
    (
        "run-base-url-ftp",
        ["run", "--llm", "--base-url", "ftp://127.0.0.1:9"],
        {"OPENROUTER_API_KEY": "x"},
        ["--base-url", "http(s)"],
    ),
    (
        "run-base-url-env",
        ["run", "--llm"],
        {"OPENROUTER_API_KEY": "x", "MEMEVAL_LLM_BASE_URL": "nonsense"},
        ["MEMEVAL_LLM_BASE_URL"],
    ),
    ("run-suite-unknown", ["run", "--suite", "nosuch"], {}, ["unknown suite `nosuch`"]),
    ("run-limit-zero", ["run", "--limit", "0"], {}, ["--limit must be at least 1, not 0"]),
    (
        "run-dispatch-window-zero",
        ["run"],
        {"MEMEVAL_DISPATCH_WINDOW": "0"},
        ["MEMEVAL_DISPATCH_WINDOW", "greater than or equal to 1"],
    ),
    (
        "run-dispatch-window-text",
        ["run"],
        {"MEMEVAL_DISPATCH_WINDOW_MB": "lots"},
        ["MEMEVAL_DISPATCH_WINDOW_MB", "integer"],
    ),
    ("run-suite-truncated", ["run", "--suite", "{tmp}/trunc.yaml"], {}, ["trunc.yaml:3"]),
    ("run-suite-binary", ["run", "--suite", "{tmp}/garbage.yaml"], {}, ["garbage.yaml"]),
    ("run-suite-empty", ["run", "--suite", "{tmp}/empty.yaml"], {}, ["empty.yaml"]),
    ("run-only-unknown", ["run", "--only", "nosuch"], {}, ["--only nosuch"]),
    ("run-dimension-unknown", ["run", "--dimension", "nosuch"], {}, ["dimension `nosuch`"]),
    ("run-resume-unknown", ["run", "--resume", "nosuch"], {}, ["`nosuch`"]),
    ("run-json-folder", ["run", "--json", "{tmp}/adir"], {}, ["--json", "is a folder"]),
    ("run-md-under-file", ["run", "--md", "{tmp}/afile/r.md"], {}, ["--md", "afile is a file"]),
    ("run-out-file", ["run", "--out", "{tmp}/afile"], {}, ["--out", "is a file"]),
    ("run-out-holds-folder", ["run", "--out", "{tmp}"], {}, ["folder named report.json"]),
    ("run-out-under-file", ["run", "--out", "{tmp}/afile/sub"], {}, ["--out", "afile"]),
    (
        "run-baseline-not-report",
        ["run", "--fail-on-regression", "{tmp}/notreport.json"],
        {},
        ["notreport.json", "not a memeval JSON report"],
    ),
    ("run-broker-http", ["run"], {"MEMEVAL_BROKER_URL": "http://x"}, ["MEMEVAL_BROKER_URL"]),
    (
        "run-database-scheme",
        ["run"],
        {"MEMEVAL_DATABASE_URL": "nonsense://"},
        ["MEMEVAL_DATABASE_URL", "nonsense"],
    ),
    (
        "run-database-not-sqlite",
        ["run"],
        {"MEMEVAL_DATABASE_URL": "sqlite:///{tmp}/garbage.json"},
        ["garbage.json", "not a database", "MEMEVAL_DATABASE_URL"],
    ),
    (
        "run-database-under-file",
        ["run"],
        {"MEMEVAL_DATABASE_URL": "sqlite:///{tmp}/afile/x.db"},
        ["MEMEVAL_DATABASE_URL", "afile is a file"],
    ),
    ("run-namespace-space", ["run"], {"MEMEVAL_NAMESPACE": "a b"}, ["MEMEVAL_NAMESPACE"]),
    ("run-case-timeout", ["run"], {"MEMEVAL_CASE_TIMEOUT": "-1"}, ["MEMEVAL_CASE_TIMEOUT"]),
    ("report-unknown-run", ["report", "nosuch"], {}, ["`nosuch`"]),
    ("report-not-report", ["report", "{tmp}/notreport.json"], {}, ["notreport.json"]),
    ("report-truncated", ["report", "{tmp}/trunc.json"], {}, ["trunc.json"]),
    (
        "report-no-store",
        ["report", "nosuch", "--database-url", "sqlite:///{tmp}/none.db"],
        {},
        ["no results store", "none.db"],
    ),
    ("report-missing-file", ["report", "{tmp}/nope.json"], {}, ["nope.json"]),
    ("report-resamples", ["report", "nosuch", "--resamples", "0"], {}, ["--resamples"]),
    (
        "report-out-under-file",
        ["report", "{tmp}/notreport.json", "--out", "{tmp}/afile/r.md"],
        {},
        ["--out", "afile is a file"],
    ),
    (
        "report-database-not-sqlite",
        ["report", "nosuch", "--database-url", "sqlite:///{tmp}/garbage.json"],
        {},
        ["results store", "not a database"],
    ),
    ("compare-unknown-run", ["compare", "nosuch", "other"], {}, ["`nosuch`"]),
    ("compare-html-folder", ["compare", "a", "b", "--html", "{tmp}/adir"], {}, ["--html"]),
    ("status-unknown-run", ["status", "nosuch"], {}, ["`nosuch`"]),
    ("status-json-folder", ["status", "nosuch", "--json", "{tmp}/adir"], {}, ["--json"]),
    (
        "runs-database-not-sqlite",
        ["runs"],
        {"MEMEVAL_DATABASE_URL": "sqlite:///{tmp}/garbage.json"},
        ["MEMEVAL_DATABASE_URL", "not a database"],
    ),
    ("runs-limit-zero", ["runs", "--limit", "0"], {}, ["--limit"]),
    ("estimate-trials-zero", ["estimate", "--models", "a", "--trials", "0"], {}, ["--trials"]),
    ("estimate-models-empty", ["estimate", "--models", ","], {}, ["no model given"]),
    (
        "estimate-base-url",
        ["estimate", "--models", "a", "--base-url", "127.0.0.1:9"],
        {},
        ["--base-url", "http(s)"],
    ),
    ("sweep-budget-zero", ["sweep", "--models", "a", "--budget-usd", "0"], {}, ["--budget-usd"]),
    (
        "sweep-engine-unknown-dry-run",
        ["sweep", "--models", "a", "--budget-usd", "1", "--engine", "nosuch", "--dry-run"],
        {},
        ["unknown engine `nosuch`"],
    ),
    (
        "sweep-profile-malformed",
        ["sweep", "--models", "a", "--budget-usd", "1", "--profile", "garbage"],
        {},
        ["profile `garbage`"],
    ),
    ("validate-binary", ["suites", "validate", "{tmp}/garbage.yaml"], {}, ["garbage.yaml"]),
    ("validate-missing", ["suites", "validate", "{tmp}/nope.yaml"], {}, ["nope.yaml"]),
    ("conformance-no-token", ["conformance", NOWHERE], {}, ["MEMEVAL_HTTP_TOKEN"]),
    (
        "conformance-timeout-negative",
        ["conformance", NOWHERE, "--timeout", "-1"],
        {"MEMEVAL_HTTP_TOKEN": "t"},
        ["--timeout"],
    ),
    (
        "conformance-timeout-nan",
        ["conformance", NOWHERE, "--timeout", "nan"],
        {"MEMEVAL_HTTP_TOKEN": "t"},
        ["--timeout"],
    ),
    (
        "conformance-url-space",
        ["conformance", "http://127.0.0 .1:9"],
        {"MEMEVAL_HTTP_TOKEN": "t"},
        ["contains a space"],
    ),
    ("serve-port-high", ["serve", "--port", "70000"], {"MEMEVAL_SERVE_TOKEN": "t"}, ["--port"]),
    (
        "flower-port-negative",
        ["flower", "--port", "-1"],
        {"MEMEVAL_BROKER_URL": "redis://127.0.0.1:9/0"},
        ["--port"],
    ),
    ("worker-no-broker", ["worker"], {}, ["MEMEVAL_BROKER_URL"]),
]


@pytest.fixture
def inputs(tmp_path: Path) -> Path:
    """The malformed files a user might hand the CLI, next to an empty results store."""
    (tmp_path / "trunc.yaml").write_text("kind: scenario\nid: x\n  bad: [\n")
    (tmp_path / "garbage.yaml").write_bytes(bytes(range(128, 256)) * 2)
    (tmp_path / "empty.yaml").write_text("")
    (tmp_path / "notreport.json").write_text('{"hello": 1}')
    (tmp_path / "trunc.json").write_text('{"run_id": ')
    (tmp_path / "garbage.json").write_bytes(bytes(range(128, 256)) * 2)
    (tmp_path / "afile").write_text("x")
    (tmp_path / "adir").mkdir()
    (tmp_path / "report.json").mkdir()
    assert open_store(_store(tmp_path)).list_runs(1) == []  # an empty store, schema and all
    return tmp_path


def _store(folder: Path) -> str:
    return f"sqlite:///{folder}/store.db"


# Run as real processes, one per way the message and the status reach the shell: click's own
# usage error (an option that does not parse), and memeval's error from an option it checks, a
# variable, a malformed file and sweep's budget. Every other case calls the same entry point in
# this process, which saves the interpreter and imports (about a second of CPU) per case.
IN_SUBPROCESS = frozenset(
    {"run-trials-word", "run-engine-unknown", "run-database-scheme", "run-suite-truncated"}
    | {"sweep-budget-zero"}
)


@pytest.mark.parametrize(
    ("args", "env", "fragments", "in_subprocess"),
    [(*c[1:], c[0] in IN_SUBPROCESS) for c in CASES],
    ids=[c[0] for c in CASES],
)
def test_bad_input_is_one_clear_message(
    inputs: Path,
    monkeypatch: pytest.MonkeyPatch,
    args: list[str],
    env: dict[str, str],
    fragments: list[str],
    in_subprocess: bool,
) -> None:
    for name in CLEARED:
        monkeypatch.delenv(name, raising=False)
    store = _store(inputs)
    given = {k: v.format(tmp=inputs) for k, v in env.items()}
    argv = [a.format(tmp=inputs) for a in args]
    environment = {"MEMEVAL_DATABASE_URL": store, "COLUMNS": "200", **given}
    if in_subprocess:
        done = run_cli(*argv, cwd=inputs, env=environment, timeout=60)
    else:
        done = run_cli_here(*argv, cwd=inputs, env=environment)
    assert done.returncode == BAD_INPUT, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    # One message: memeval's `error: ...` line (its `fix:` may follow), or click's one box.
    assert len(re.findall(r"(?m)^(error: |╭─ Error )", done.stderr)) == 1, done.stderr
    for fragment in fragments:
        assert fragment.format(tmp=inputs) in done.stderr, done.stderr
    assert open_store(store).list_runs(5) == [], "bad input must fail before a run exists"


@pytest.mark.parametrize(
    "args",
    [
        ["run", "--llm", "--rate", "model=5/d"],
        ["run", "--llm", "--price", "x=1"],
        ["run", "--llm", "--budget-usd", "-1"],
        ["sweep", "--models", "a/b", "--budget-usd", "1", "--rate", "model=5/d"],
        ["sweep", "--models", "a/b", "--budget-usd", "1", "--price", "x=1"],
    ],
)
def test_a_mistyped_model_option_leaves_no_store_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str]
) -> None:
    """The default store is `memeval-runs/` in the working folder: a refused command must not
    have made one there."""
    for name in (*CLEARED, "MEMEVAL_DATABASE_URL"):
        monkeypatch.delenv(name, raising=False)
    done = run_cli_here(*args, cwd=tmp_path)
    assert done.returncode == BAD_INPUT, done.stdout + done.stderr
    assert list(tmp_path.iterdir()) == []

"""The lifecycle-2 options as a user types them."""

from __future__ import annotations

import json


def kpi_values(path) -> dict[tuple[str | None, str], float | None]:  # type: ignore[no-untyped-def]
    report = json.loads(path.read_text())
    return {(k["tag"], k["name"]): k["value"] for k in report["kpis"]}


def test_run_suite_safety_audits_an_engine(cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "safety.json"
    done = cli(
        "run",
        "--suite",
        "safety",
        "--engine",
        "naive",
        "--in-process",
        "--json",
        str(out),
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert "erase_failures" in done.stdout and "forget_write_supported" in done.stdout
    got = kpi_values(out)
    assert got[(None, "forget_write_supported")] == 0.0  # naive forgets whole tenants only
    assert got[(None, "erase_failures")] is not None


def test_a_needle_sweep_with_a_deadline(cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "sweep.json"
    done = cli(
        "run",
        "--suite",
        "lifecycle",
        "--only",
        "needle_in_noise",
        "--noise",
        "60,120",
        "--needle",
        "early,late",
        "--seed",
        "4",
        "--deadline",
        "60000",
        "--pack-sections",
        "3",
        "--in-process",
        "--json",
        str(out),
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(out.read_text())
    assert sorted(c["case_id"] for c in report["cases"]) == [
        f"lifecycle/needle_in_noise.n{n}.{w}" for n in (120, 60) for w in ("early", "late")
    ]
    got = kpi_values(out)
    for size in (60, 120):
        for where in ("early", "late"):
            assert got[(f"haystack:{size}-{where}", "pack_hit")] is not None
            assert got[(f"haystack:{size}-{where}", "mrr")] is not None
    assert got[(None, "deadline_timeout_rate")] == 0.0
    assert got[(None, "host_pack_hit")] is not None


def test_host_and_needle_options_refuse_nonsense(cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    for args, said in (
        (["--deadline", "0"], "--deadline"),
        (["--pack-tokens", "-5"], "--pack-tokens"),
        (["--needle", "late"], "--noise"),
        (["--noise", "100", "--needle", "top"], "early, middle and late"),
        (["--noise", "many"], "not a list of sizes"),
    ):
        done = cli("run", "--in-process", *args, cwd=tmp_path)
        assert done.returncode == 2, (args, done.stdout, done.stderr)
        assert said in done.stderr + done.stdout and "Traceback" not in done.stderr

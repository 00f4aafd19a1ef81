"""Where engine keys must be: on the workers that call the engine, not in the shell that only
dispatches to a shared broker. Without a broker the same shell runs the cases, so it needs them.
"""

from __future__ import annotations

from tests.farm.conftest import Farm

ONE_CASE = ("--dimension", "multihop", "--trials", "1")
CORTEX = ("--engine", "cortex", "--url", "http://127.0.0.1:9")


def test_a_dispatch_only_shell_needs_no_engine_key(shared: Farm) -> None:
    shared.env.pop("CORTEX_API_KEY", None)
    detached = shared.run("run", *CORTEX, *ONE_CASE, "--detach")
    assert detached.returncode == 0, detached.stdout + detached.stderr
    run_id = detached.stdout.split()[-1]
    ((engine,),) = shared.rows("SELECT engine FROM runs WHERE id = ?", run_id)
    assert engine.startswith("cortex?url=")


def test_a_shell_that_runs_the_cases_is_asked_for_the_key_first(farm: Farm) -> None:
    farm.env.pop("CORTEX_API_KEY", None)
    refused = farm.run("run", *CORTEX, *ONE_CASE)
    assert refused.returncode != 0
    assert "CORTEX_API_KEY" in refused.stderr
    assert "Traceback" not in refused.stderr
    assert not farm.db.exists() or farm.rows("SELECT COUNT(*) FROM runs") == [(0,)]


def test_a_bad_engine_option_is_refused_before_dispatch_even_without_keys(shared: Farm) -> None:
    refused = shared.run("run", "--engine", "cortex?colour=blue", *ONE_CASE, "--detach")
    assert refused.returncode != 0
    assert "colour" in refused.stderr and "Traceback" not in refused.stderr

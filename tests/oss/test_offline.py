"""The in-process engines run offline: no model download, no telemetry, no connection to
anything but the model service on 127.0.0.1; each engine keeps its store in a folder of its
own, gone when it closes; a model service that is not running fails preflight in seconds."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memeval.engines import registry
from memeval.engines.types import Assertion
from memeval.errors import EngineUnavailable
from tests.oss.engines import ENGINES, NEXT, engine_at

PROBE = Path(__file__).with_name("offline_probe.py")
LOCAL = ("'127.0.0.1'", "('127.0.0.1',", "'localhost'")


@pytest.mark.parametrize("name", [*ENGINES, *NEXT])
def test_no_connection_leaves_the_machine(name, model_url, tmp_path):
    env = {k: v for k, v in os.environ.items() if "TELEMETRY" not in k}
    env["MEM0_DIR"] = str(tmp_path / "mem0-home")  # mem0 writes its config there on import
    done = subprocess.run(
        [sys.executable, str(PROBE), f"{name}?url={model_url}&store_dir={tmp_path}"],
        capture_output=True,
        text=True,
        timeout=240,
        env=env,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert any(s.startswith("connect") for s in seen)  # the hook does see the model calls
    outside = [s for s in seen if not any(mark in s for mark in LOCAL)]
    assert outside == []


@pytest.mark.parametrize("name", ENGINES)
def test_each_engine_has_its_own_store_folder_removed_on_close(name, model_url, tmp_path):
    first, second = (engine_at(name, model_url, str(tmp_path)) for _ in range(2))

    async def go() -> tuple[Path, Path]:
        for engine in (first, second):
            await engine.store("t", Assertion(id="a", text="Ada runs the lab.", source="s"))
        folders = (first.folder, second.folder)  # type: ignore[attr-defined]
        assert all(f is not None and f.is_dir() and f.parent == tmp_path for f in folders)
        await first.close()
        await second.close()
        return folders  # type: ignore[return-value]

    a, b = asyncio.run(go())
    assert a != b and not a.exists() and not b.exists()


@pytest.mark.parametrize("name", [*ENGINES, *NEXT])
def test_preflight_names_the_model_service_when_none_runs(name):
    engine = registry.create(f"{name}?url=http://127.0.0.1:9/v1")
    with pytest.raises(EngineUnavailable, match="memeval models serve"):
        asyncio.run(engine.preflight())


def test_engines_lists_both_with_what_they_support(cli):
    listed = {row["name"]: row for row in json.loads(cli("engines", "--json").stdout)}
    assert listed["mem0-oss"]["capabilities"] == ["abstain", "lifecycle", "provenance", "store"]
    assert listed["graphiti"]["capabilities"] == [
        "abstain",
        "lifecycle",
        "provenance",
        "query_at",
        "store",
    ]
    assert listed["mem0-oss"]["verified_against"].startswith("mem0ai 2.2.1 library")
    assert listed["graphiti"]["verified_against"].startswith("graphiti-core 0.31.2 library")
    assert listed["langmem"]["capabilities"] == ["lifecycle", "store"]
    assert listed["langmem"]["verified_against"].startswith("langmem 0.0.30 library")
    assert listed["cognee"]["capabilities"] == ["abstain", "lifecycle", "store"]
    assert "library on SQLite, LanceDB and Kuzu" in listed["cognee"]["verified_against"]
    assert "COGNEE_ENGINE_URL" in {s["env"] for s in listed["cognee"]["settings"]}
    assert {"url", "embedder_url", "llm_model"} <= {
        s["option"] for s in listed["langmem"]["settings"]
    }
    options = {s["option"] for s in listed["mem0-oss"]["settings"]}
    assert {"url", "llm_model", "embedder_model", "vector_store", "infer", "store_dir"} <= options
    assert {s["env"] for s in listed["graphiti"]["settings"]} >= {"GRAPHITI_URL"}
    assert all(s["option"] is None for s in listed["mem0-oss"]["settings"] if s["secret"])


def test_bad_settings_stop_the_run_with_one_line(cli):
    bad = cli("run", "--engine", "mem0-oss?vector_store=chroma", "--in-process")
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    assert "`vector_store`" in bad.stderr and "MEM0_OSS_VECTOR_STORE" in bad.stderr
    down = cli("run", "--engine", "graphiti?url=http://127.0.0.1:9/v1", "--in-process")
    assert down.returncode == 2 and "Traceback" not in down.stderr
    assert "memeval models serve" in down.stderr


def test_a_missing_library_is_named_with_its_exact_extra(cli, tmp_path):
    """Python sees the libraries as absent (a `None` in sys.modules blocks an import), as in
    an install without the extras; the hint must keep `[mem0]`, which rich took for markup."""
    (tmp_path / "sitecustomize.py").write_text(
        "import sys\nsys.modules['mem0'] = None\nsys.modules['langmem'] = None\n"
    )
    env = {"PYTHONPATH": str(tmp_path), "COLUMNS": "250"}
    listed = {r["name"]: r for r in json.loads(cli("engines", "--json", env=env).stdout)}
    assert listed["mem0-oss"]["error"] == "needs the `mem0` package: pip install 'memeval[mem0]'"
    assert listed["langmem"]["error"].endswith("pip install 'memeval[langmem]'")
    assert listed["graphiti"]["error"] is None
    table = cli("engines", env=env).stdout
    assert "pip install 'memeval[mem0]'" in table and "pip install 'memeval[langmem]'" in table
    run = cli("run", "--engine", "mem0-oss", "--in-process", env=env)
    assert run.returncode == 2 and "Traceback" not in run.stderr
    assert "pip install 'memeval[mem0]'" in run.stderr

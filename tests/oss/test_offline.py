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
from tests.oss.engines import ENGINES, LETTA, NEXT, engine_at

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


# Loaded by every Python started with this folder on PYTHONPATH, Letta's server included (its
# environment is built by the engine, but keeps PYTHONPATH): each process records its socket
# connects and name lookups in a file of its own beside this hook.
SOCKET_HOOK = """
import json, os, sys
from pathlib import Path

_log = Path(__file__).with_name(f"sockets-{os.getpid()}.jsonl")

def _hook(event, args):
    if event == "socket.connect":
        seen = f"connect {args[1]!r}"
    elif event == "socket.getaddrinfo":
        seen = f"lookup {args[0]!r}"
    else:
        return
    with _log.open("a") as out:
        out.write(json.dumps([sys.argv[:2], seen]) + "\\n")

sys.addaudithook(_hook)
"""


@pytest.mark.parametrize("name", [LETTA])
def test_letta_server_child_connects_nowhere_but_127_0_0_1(name, model_url, tmp_path):
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    (hooks / "sitecustomize.py").write_text(SOCKET_HOOK)
    env = {k: v for k, v in os.environ.items() if "TELEMETRY" not in k}
    env["PYTHONPATH"] = str(hooks)
    store = tmp_path / "store"
    done = subprocess.run(
        [sys.executable, str(PROBE), f"{name}?url={model_url}&store_dir={store}"],
        capture_output=True,
        text=True,
        timeout=400,
        env=env,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert done.returncode == 0, done.stderr[-2000:]
    probe_pid = None
    records: dict[int, list[str]] = {}
    for log in hooks.glob("sockets-*.jsonl"):
        pid = int(log.stem.removeprefix("sockets-"))
        lines = [json.loads(line) for line in log.read_text().splitlines()]
        if any(str(PROBE) in argv for argv, _ in lines):
            probe_pid = pid
        records[pid] = [seen for _, seen in lines]
    server = {pid: seen for pid, seen in records.items() if pid != probe_pid}
    # The server process was started, was seen calling the model service, and called only it.
    assert server and any(s.startswith("connect") for seen in server.values() for s in seen)
    outside = [s for seen in records.values() for s in seen if not any(m in s for m in LOCAL)]
    assert outside == []
    assert not list(store.iterdir())  # its private folder is gone once the engine closed


def test_letta_is_listed_with_its_server_and_settings(cli):
    listed = {row["name"]: row for row in json.loads(cli("engines", "--json").stdout)}
    letta = listed["letta"]
    assert letta["capabilities"] == ["lifecycle", "store"]
    assert letta["verified_against"].startswith("letta 0.11.7 server on SQLite")
    envs = {s["env"] for s in letta["settings"]}
    assert {"LETTA_ENGINE_URL", "LETTA_ENGINE_SERVER_PYTHON", "LETTA_ENGINE_API_KEY"} <= envs
    assert {"url", "server_python", "store_dir"} <= {s["option"] for s in letta["settings"]}


def test_letta_without_its_client_names_the_extra(cli, tmp_path):
    (tmp_path / "sitecustomize.py").write_text("import sys\nsys.modules['letta_client'] = None\n")
    env = {"PYTHONPATH": str(tmp_path), "COLUMNS": "250"}
    listed = {r["name"]: r for r in json.loads(cli("engines", "--json", env=env).stdout)}
    assert listed["letta"]["error"] == (
        "needs the `letta_client` package: pip install 'memeval[letta]'"
    )
    run = cli("run", "--engine", "letta", "--in-process", env=env)
    assert run.returncode == 2 and "Traceback" not in run.stderr
    assert "pip install 'memeval[letta]'" in run.stderr


def test_letta_with_a_server_python_that_is_not_there_stops_the_run_with_one_line(cli, tmp_path):
    missing = tmp_path / "no-such-env" / "bin" / "python"
    run = cli("run", "--engine", f"letta?server_python={missing}", "--in-process")
    assert run.returncode == 2 and "Traceback" not in run.stderr
    assert "LETTA_ENGINE_SERVER_PYTHON" in run.stderr and str(missing) in run.stderr

"""Settings the machine refuses (a path nobody can write, a port in use, a store folder that
cannot exist) are one line and exit 2, before any work starts, never a traceback."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from tests.conftest import run_cli
from tests.infra.conftest import PrivateRedis

BAD_INPUT = 2
NOWHERE = "/proc/memeval-infra"  # /proc takes no new files, not even from root


def _one_line_error(done, *needles: str) -> None:
    assert done.returncode == BAD_INPUT, done.stdout + done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    assert done.stderr.startswith("error: "), done.stderr
    for needle in needles:
        assert needle in done.stderr, done.stderr


@pytest.mark.parametrize("option", ["--out", "--json", "--md"])
def test_an_unwritable_report_path(tmp_path: Path, option: str) -> None:
    env = {"MEMEVAL_DATABASE_URL": f"sqlite:///{tmp_path / 'm.db'}"}
    done = run_cli("run", option, f"{NOWHERE}/report", env=env, timeout=60)
    _one_line_error(done, option, "/proc")
    assert not (tmp_path / "m.db").exists(), "refused before the store was even opened"


def test_serve_on_a_busy_port() -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        done = run_cli("serve", "--port", str(port), env={"MEMEVAL_SERVE_TOKEN": "t"}, timeout=60)
    _one_line_error(done, f"127.0.0.1:{port}", "--port")


@pytest.mark.parametrize("command", [["run", "--only", "cfo_on_date"], ["runs"], ["worker"]])
def test_a_sqlite_store_in_a_folder_that_cannot_exist(
    command: list[str], private_redis: PrivateRedis
) -> None:
    env = {"MEMEVAL_DATABASE_URL": f"sqlite:///{NOWHERE}/store/memeval.db"}
    if command == ["worker"]:
        env["MEMEVAL_BROKER_URL"] = private_redis.url
    done = run_cli(*command, env=env, timeout=60)
    _one_line_error(done, "MEMEVAL_DATABASE_URL", NOWHERE)

from __future__ import annotations

from pathlib import Path

import pytest

from memeval.errors import UsageError
from memeval.store import database_url, open_store, scrub_secrets


def test_default_is_a_sqlite_file_under_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MEMEVAL_DATABASE_URL", raising=False)
    monkeypatch.chdir(tmp_path)
    store = open_store()
    expected = tmp_path / "memeval-runs" / "memeval.db"
    assert store.url.database == str(expected)
    monkeypatch.chdir("/")  # workers may run elsewhere: the path was fixed at open time
    store.list_runs()
    store.dispose()
    assert expected.exists()


def test_environment_variable_is_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMEVAL_DATABASE_URL", f"sqlite:///{tmp_path / 'env.db'}")
    assert open_store().url.database == str(tmp_path / "env.db")
    assert open_store(f"sqlite:///{tmp_path / 'arg.db'}").url.database == str(tmp_path / "arg.db")


@pytest.mark.parametrize("scheme", ["postgresql", "postgres", "postgresql+psycopg"])
def test_postgres_urls_use_psycopg3(scheme: str) -> None:
    url = database_url(f"{scheme}://u@db.example:5433/runs")
    assert (url.drivername, url.host, url.port, url.database) == (
        "postgresql+psycopg",
        "db.example",
        5433,
        "runs",
    )


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("mysql://u@h/db", "not `mysql`"),
        ("sqlite://", "in-memory"),
        ("sqlite:///:memory:", "in-memory"),
        ("::not a url::", "cannot parse"),
    ],
)
def test_unusable_urls_fail_before_connecting(url: str, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        open_store(url)


def test_scrub_secrets_drops_credential_keys_at_any_depth() -> None:
    options = {
        "model": "m",
        "ApiKey": "1",
        "nested": {"refresh_TOKEN": "2", "keep": [{"password_file": "3", "n": 1}], "depth": 2},
        "items": ("x", {"Secret": "4"}),
    }
    assert scrub_secrets(options) == {
        "model": "m",
        "nested": {"keep": [{"n": 1}], "depth": 2},
        "items": ["x", {}],
    }
    assert options["ApiKey"] == "1"  # the caller's mapping is left as it was

"""`memeval conformance` passes a served engine and fails, in a clear table, one that leaks."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from pydantic import SecretStr

from memeval.conformance import Verdict, check
from memeval.engines.naive import NaiveEngine
from tests.adapters.conftest import TOKEN, run, served


class Leaky(NaiveEngine):
    """Every tenant shares one store: the bug conformance exists to catch."""

    def _tenant(self, tenant: str):  # type: ignore[override]
        return super()._tenant("shared")

    async def query(self, tenant, text, k=5):  # type: ignore[override]
        return await super().query("shared", text, k)

    async def list(self, tenant):  # type: ignore[override]
        return await super().list("shared")

    async def forget(self, tenant):  # type: ignore[override]
        await super().forget("shared")


@pytest.fixture
def leaky_url() -> Iterator[str]:
    yield from served(Leaky())


def verdicts(url: str, token: str = TOKEN) -> dict[str, Verdict]:
    return {c.name: c.verdict for c in run(check(url, SecretStr(token), timeout=5))}


def test_the_served_reference_engine_conforms(reference_url):
    found = verdicts(reference_url)
    assert set(found.values()) == {Verdict.passed}, found
    assert len(found) == 8


def test_a_server_that_leaks_tenants_fails_the_isolation_checks(leaky_url):
    found = verdicts(leaky_url)
    assert found["fixture tenants kept apart"] is Verdict.failed
    assert found["lifecycle tenants kept apart"] is Verdict.failed
    assert found["forget touches one tenant only"] is Verdict.failed
    assert found["refuses a missing token"] is Verdict.passed  # the table tells them apart


def test_a_wrong_token_fails_at_the_first_check(reference_url):
    found = verdicts(reference_url, token="not-it")
    assert list(found.values()) == [Verdict.failed]


def test_the_cli_prints_the_table_and_exits_1_on_a_leak(cli, leaky_url, reference_url):
    env = {"MEMEVAL_HTTP_TOKEN": TOKEN, "COLUMNS": "200"}
    leak = cli("conformance", leaky_url, env=env)
    assert leak.returncode == 1, leak.stderr
    assert "tenants kept apart" in leak.stdout and "FAIL" in leak.stdout
    assert "checks failed" in leak.stdout
    good = cli("conformance", reference_url, env=env)
    assert good.returncode == 0, good.stdout + good.stderr
    assert "conformant" in good.stdout


def test_the_cli_asks_for_a_token_and_a_real_url(cli):
    missing = cli("conformance", "http://127.0.0.1:9", env={"MEMEVAL_HTTP_TOKEN": ""})
    assert missing.returncode == 2 and "MEMEVAL_HTTP_TOKEN" in missing.stderr
    bad = cli("conformance", "ftp://x", env={"MEMEVAL_HTTP_TOKEN": TOKEN})
    assert bad.returncode == 2 and "not an http(s) URL" in bad.stderr

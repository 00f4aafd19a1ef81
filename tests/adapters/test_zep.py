"""Zep: its official SDK against the fake (a fake the SDK cannot use is wrong), then memeval's
`zep` adapter against the same fake: users and threads per tenant, tasks, each turn stored
once, every error the brief names, the built-in suite and a LoCoMo-shaped conversation."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from memeval.engines.adapters.transport import RemoteError
from memeval.engines.idempotency import write_key
from memeval.engines.registry import describe
from memeval.engines.types import MemoryItem, TurnContext
from memeval.errors import AuthRejected, CreditsExhausted, EngineUnavailable, UsageError
from memeval.results import CaseStatus
from tests.adapters.builtin_suite import every_case_done, run_builtin_suite
from tests.adapters.conftest import engine_at, run
from tests.adapters.fake_zep import ZEP_KEY, FakeZep
from tests.adapters.fakes import Fault, running
from tests.adapters.hosted_cases import FIRST, history, locomo_through, turn, written_twice

QUICK = "poll=0.01&settle_wait=5"


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[FakeZep, str]]:
    server = FakeZep()
    monkeypatch.setenv("ZEP_API_KEY", ZEP_KEY)
    with running(server.app()) as url:
        yield server, url


def sdk(url: str, key: str = ZEP_KEY, **kwargs):
    from zep_cloud import Zep

    return Zep(api_key=key, base_url=f"{url}/api/v4", **kwargs)


def finished(client, task_uuid: str) -> str:
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        status = client.task.get(task_uuid).status
        if status in ("succeeded", "partial", "failed"):
            return status
        time.sleep(0.02)
    raise AssertionError(f"task {task_uuid} never finished")


def bodies(server: FakeZep, fragment: str) -> list[dict]:
    return [json.loads(s.body) for s in server.wire.calls(fragment, "POST")]


# ---- the vendor's SDK against the fake ------------------------------------------------------


def test_sdk_users_threads_messages_tasks_search_and_delete(fake):
    from zep_cloud import AddMessage

    server, url = fake
    client = sdk(url)
    user = client.user.create(user_id="alice", metadata={"plan": "free"})
    assert user.uuid_ and user.graph_uuid and user.user_id == "alice"
    assert client.user.lookup(user_id="alice").uuid_ == user.uuid_
    thread = client.thread.create(user_uuid=user.uuid_)
    added = client.thread.add_messages(
        thread.uuid_,
        messages=[AddMessage(role="user", name="Alice", content="I restore old rowing boats.")],
    )
    assert added.messages[0].uuid_ and added.task.status == "pending"
    assert finished(client, added.task.uuid_) == "succeeded"
    episode = client.graph.episode.add(user.graph_uuid, data="Alice lives in Leeds.", type="text")
    finished(client, episode.task.uuid_)
    facts = [e.fact for e in client.graph.search_edges(user.uuid_, query="rowing boats")]
    assert facts == ["I restore old rowing boats."]  # a user graph is reached by the user too
    edge = next(iter(client.graph.search_edges(user.graph_uuid, query="Leeds", page_size=3)))
    assert edge.episode_uuids == [episode.episode.uuid_]
    seen = server.wire.calls("/api/v4/", "POST")
    assert all(s.headers["authorization"] == f"Api-Key {ZEP_KEY}" for s in seen)
    assert all(s.headers.get("idempotency-key") for s in seen)  # the SDK keys every mutation
    deleted = client.user.delete(user.uuid_)
    assert deleted.task.uuid_ and server.threads == {} and server.edges == {}


def test_sdk_retries_keep_their_idempotency_key_and_a_replay_stores_nothing(fake):
    from zep_cloud import AddMessage

    server, url = fake
    client = sdk(url, max_retries=2)
    user = client.user.create(user_id="bob")
    thread = client.thread.create(user_uuid=user.uuid_)
    server.wire.inject(Fault(503, path="/messages"))
    client.thread.add_messages(thread.uuid_, messages=[AddMessage(role="user", content="hi")])
    first, second = (s.headers["idempotency-key"] for s in server.wire.calls("/messages"))
    assert first == second
    message = [AddMessage(role="user", content="once")]
    client.thread.add_messages(thread.uuid_, messages=message, idempotency_key="k1")
    client.thread.add_messages(thread.uuid_, messages=message, idempotency_key="k1")
    assert [m["content"] for m in server.messages.values()].count("once") == 1


def test_sdk_reads_the_fakes_errors(fake):
    from zep_cloud import AddMessage
    from zep_cloud.core.api_error import ApiError
    from zep_cloud.errors import BadRequestError, ConflictError, NotFoundError, UnauthorizedError

    server, url = fake
    client = sdk(url, max_retries=0)
    with pytest.raises(UnauthorizedError) as refused:
        sdk(url, key="wrong").project.get()
    assert refused.value.body.error.code == "unauthorized"
    with pytest.raises(NotFoundError):
        client.user.lookup(user_id="nobody")
    client.user.create(user_id="carol")
    with pytest.raises(ConflictError):
        client.user.create(user_id="carol")
    user = client.user.lookup(user_id="carol")
    thread = client.thread.create(user_uuid=user.uuid_)
    too_many = [AddMessage(role="user", content=f"m{i}") for i in range(31)]
    with pytest.raises(BadRequestError):
        client.thread.add_messages(thread.uuid_, messages=too_many)
    server.wire.inject(Fault(429, retry_after="7", path="/search/edges"))
    with pytest.raises(ApiError) as limited:
        list(client.graph.search_edges(user.uuid_, query="x"))
    assert limited.value.status_code == 429 and limited.value.headers["retry-after"] == "7"
    server.wire.inject(Fault(402, body={"error": {"code": "payment_required"}}, path="/users"))
    with pytest.raises(ApiError) as unpaid:
        client.user.create(user_id="dave")
    assert unpaid.value.status_code == 402
    server.wire.inject(Fault(500, path="/search/edges"), Fault(429, retry_after="0", path="/edges"))
    list(sdk(url, max_retries=2).graph.search_edges(user.uuid_, query="x"))  # retried twice
    slow = sdk(url, max_retries=0, timeout=0.2)
    server.wire.inject(Fault(0, delay=1.0, path="/project"))
    with pytest.raises(httpx.TimeoutException):
        slow.project.get()


def test_async_sdk_round_trip(fake):
    from zep_cloud import AddMessage, AsyncZep

    _server, url = fake

    async def calls():
        client = AsyncZep(api_key=ZEP_KEY, base_url=f"{url}/api/v4")
        user = await client.user.create(user_id="ada")
        thread = await client.thread.create(user_uuid=user.uuid_)
        await client.thread.add_messages(
            thread.uuid_, messages=[AddMessage(role="user", content="Ada prefers tea.")]
        )
        await asyncio.sleep(0.1)
        found = [e async for e in await client.graph.search_edges(user.uuid_, query="tea")]
        await client.user.delete(user.uuid_)
        return found

    assert [e.fact for e in run(calls())] == ["Ada prefers tea."]


# ---- memeval's adapter against the same fake -------------------------------------------------


def test_adapter_makes_a_user_per_tenant_and_traces_facts_to_assertions(fake):
    server, url = fake
    server.delay = 0.2
    engine = engine_at("zep", url, QUICK)

    async def calls():
        with write_key("run/case:0"):
            await engine.store("t.a", FIRST)
        found = await engine.query("t.a", "Acme plan")
        other = await engine.query("t.b", "Acme plan")
        await engine.close()
        return found, other

    found, other = run(calls())
    (user,) = server.users.values()
    assert user["user_id"] == "memeval-t_2ea" and user["metadata"] == {"memeval_tenant": "t.a"}
    episode = bodies(server, "/episodes")[0]
    assert episode["metadata"]["memeval_write"] == "run/case:0"
    assert len(server.wire.calls("/api/v4/tasks/")) >= 2  # polled while pending
    assert found.hits[0].assertion_id == "plan-1" and found.hits[0].source == "crm"
    assert other.hits == []


def test_a_history_of_many_turns_sends_keyed_chunks_and_stores_each_turn_once(fake):
    server, url = fake
    engine = engine_at("zep", url, QUICK)
    turns = history(35)

    ids, again, listed = written_twice(engine, turns)
    assert ids == again == [f"run/case:4/t{i}" for i in range(35)]
    sent = server.wire.calls("/messages", "POST")
    assert [len(json.loads(s.body)["messages"]) for s in sent] == [30, 5, 30, 5]
    assert len({s.headers["idempotency-key"] for s in sent}) == 2  # a key per chunk
    assert len(server.messages) == 35  # the redelivery was answered from Zep's record
    metadata = [m["metadata"]["memeval_write"] for m in server.messages.values()]
    assert sorted(metadata) == sorted(ids) and sorted(listed) == sorted(ids)
    assert len(server.threads) == 1


def test_lifecycle_lists_succeeded_writes_and_forget_deletes_the_user(fake):
    server, url = fake
    server.delay = 0.3
    server.fail_next = 1
    engine = engine_at("zep", url, QUICK)

    async def calls():
        lost = await engine.ingest("t", MemoryItem(id="d0", text="A broken upload."))
        kept = await engine.ingest("t", MemoryItem(id="d1", text="Grace owns the rota."))
        early = await engine.list("t")
        await asyncio.sleep(0.4)
        listed = await engine.list("t")
        ctx = TurnContext(agent="a", thread="x", turn=turn("Who owns the rota?"), log=False)
        pack = await engine.pre_turn("t", ctx)
        await engine.forget("t")
        await engine.forget("never-written")  # no such user: nothing to delete
        await engine.close()
        return lost, kept, early, listed, pack

    lost, kept, early, listed, pack = run(calls())
    assert early == [] and listed == [kept] and lost not in listed
    assert "Grace owns the rota." in pack.markdown
    assert server.wire.calls("/messages") == []  # the probe was not logged
    assert server.users == {} and server.edges == {}


def test_errors_401_402_404_429_5xx_and_timeouts(fake, monkeypatch):
    server, url = fake
    engine = engine_at("zep", url, QUICK + "&timeout=0.5")

    async def calls():
        await engine.ingest("t", MemoryItem(id="d", text="Boats float."))
        server.wire.inject(
            Fault(429, retry_after="0.1", path="/search/edges"),
            Fault(502, path="/search/edges"),
            Fault(0, delay=1.0, path="/search/edges"),
        )
        await engine.query("t", "boats")
        assert len(server.wire.calls("/search/edges")) == 4  # 3 failures retried, then answered
        server.wire.inject(*[Fault(503, path="/search/edges")] * 4)
        with pytest.raises(EngineUnavailable):
            await engine.query("t", "boats")
        server.wire.inject(Fault(402, body={"error": {"code": "payment_required"}}, path="/ep"))
        with pytest.raises(CreditsExhausted):
            await engine.ingest("t", MemoryItem(id="e", text="x"))
        server.wire.inject(Fault(404, body={"error": {"code": "not_found"}}, path="/tasks/"))
        with pytest.raises(RemoteError):  # a refused read is the case's error, never a score
            await engine.store("u", FIRST)
        await engine.close()

    run(calls())
    monkeypatch.setenv("ZEP_API_KEY", "zep-wrong")
    with pytest.raises(AuthRejected) as refused:
        run(engine_at("zep", url).preflight())
    assert "ZEP_API_KEY" in refused.value.fix and "zep-wrong" not in str(refused.value)


def test_two_workers_writing_for_one_tenant_share_its_zep_user(fake):
    server, url = fake
    first, second = engine_at("zep", url, QUICK), engine_at("zep", url, QUICK)

    async def calls():
        await first.ingest("t", MemoryItem(id="a", text="Boats float."))
        await second.ingest("t", MemoryItem(id="b", text="Oars row."))  # 409, then lookup
        await asyncio.sleep(0.15)
        found = await second.query("t", "boats oars")
        await first.close()
        await second.close()
        return found

    assert len(run(calls()).hits) == 2 and len(server.users) == 1
    assert server.wire.calls("/users/lookup")


def test_preflight_passes_with_a_good_key(fake):
    server, url = fake
    run(engine_at("zep", url).preflight())
    assert server.wire.calls("/api/v4/project", "GET")


def test_the_full_built_in_suite_runs_with_every_case_done(fake):
    server, url = fake
    results = run_builtin_suite(engine_at("zep", url, QUICK), "zep-suite")
    scenarios = every_case_done(results)
    assert any(p.hit for r in scenarios for p in r.probes)
    assert server.users == {}  # every tenant forgotten


def test_a_locomo_conversation_stores_every_turn_once(fake, tmp_path: Path):
    server, url = fake
    result, turn_ids = locomo_through(engine_at("zep", url, QUICK), tmp_path)
    assert result.status is CaseStatus.done, result.error
    stored = [
        m["metadata"]["memeval_id"]
        for body in bodies(server, "/messages")
        for m in body["messages"]
        if "memeval_id" in m["metadata"]
    ]
    assert sorted(stored) == sorted(turn_ids)  # every turn once, none twice


def test_engines_listing_names_zep_and_its_key_comes_only_from_the_environment(fake):
    _server, url = fake
    with pytest.raises(UsageError, match="secret"):
        engine_at("zep", url, "api_key=zep-in-a-reference")
    row = next(r for r in describe() if r.name == "zep")
    assert row.verified_against.startswith("zep-cloud 4.0.1")
    assert "lifecycle" in (row.capabilities or [])
    assert any(s.env == "ZEP_API_KEY" and s.secret for s in row.settings)

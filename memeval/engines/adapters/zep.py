"""`zep`: Zep's hosted context graph (API v4), on the routes its official SDK speaks.

The wire, as `zep-cloud` 4.0.1 (`zep_cloud/{user,thread,graph,task}/raw_client.py`, `types/`)
and Zep's v4 API reference give it: every route lives under `/api/v4` and takes
`Authorization: Api-Key <ZEP_API_KEY>`; users, threads and episodes are addressed by
server-assigned UUIDs, and a user's external `user_id` (unique in the project) is found again
through `POST /users/lookup`. Messages go to a thread (`POST /threads/{uuid}/messages`, at most
30 per call), business data to the user's graph as episodes (`POST /graphs/{graph}/episodes`);
both answer 202 with a `task` that `GET /tasks/{uuid}` reports pending, then succeeded, partial
or failed, and extraction into the graph is done only then. Reads are
`POST /graphs/{graph}/search/edges` (the facts Zep extracted, each naming the episodes it came
from). Deleting a user is itself a task, and takes the user's threads and graph with it.

A memeval tenant is one Zep user (its `user_id` the tenant, escaped), each memeval thread one
Zep thread of that user, created on first use. Turns are thread messages; documents and the
fixture face's assertions are episodes. Every mutating request carries an `Idempotency-Key`
(the SDK sends one on each, and reuses it on its own retries): a write's is derived from the
runner's write key, so a retried or redelivered write is answered from Zep's record of the
first, and a history of N turns sends ceil(N/30) requests, each under its own key, whose
messages each carry their own write id (`hosted_writes.item_ids`) in their metadata. A write is
listed once its task has succeeded, so the runner's settle step follows Zep's own word; a
fixture's `store` and a `forget` wait for their tasks. A pack is the facts search returns, in
Zep's order; a hit's assertion is traced through the episodes the fact names.

memeval keeps its own httpx transport rather than `zep_cloud.AsyncZep` (whose retries ignore
the farm's back-pressure hook and which memeval's error rules could not see through); the SDK is
what `tests/adapters/test_zep.py` drives against the same fake this adapter is tested on.
"""

from __future__ import annotations

import asyncio
import uuid
from collections import defaultdict
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SecretStr
from pydantic_settings import SettingsConfigDict

from memeval.engines.adapters import hosted_writes as hw
from memeval.engines.adapters.cortex_scope import tenant_id
from memeval.engines.adapters.packs import SearchPacks
from memeval.engines.adapters.remote import RemoteEngine, parse
from memeval.engines.adapters.settings import EngineSettings
from memeval.engines.adapters.transport import RemoteError
from memeval.engines.idempotency import HEADER
from memeval.engines.pack import PACK_K
from memeval.engines.types import (
    Assertion,
    Capability,
    Hit,
    MemoryItem,
    QueryResult,
    Turn,
)

SDK = "zep-cloud 4.0.1"
API = "/api/v4"
ID_TAG = "memeval_id"
WRITE_TAG = "memeval_write"
MAX_MESSAGES = 30  # per add_messages call (Zep's documented limit)
DONE = frozenset({"succeeded", "partial"})


class ZepSettings(EngineSettings):
    model_config = SettingsConfigDict(env_prefix="ZEP_")
    engine = "zep"
    url: str = Field(default="https://api.getzep.com", description="Zep's API host.")
    api_key: SecretStr = Field(description="Zep project API key (billed: use a test project).")
    poll: float = Field(default=0.5, gt=0, description="Seconds between polls of a task.")
    settle_wait: float = Field(
        default=120.0, gt=0, description="Seconds a write or deletion task may take."
    )


class _Reply(BaseModel):
    model_config = ConfigDict(extra="ignore")


class _Task(_Reply):
    uuid: str
    status: str


class _User(_Reply):
    uuid: str
    graph_uuid: str


class _Thread(_Reply):
    uuid: str


class _Added(_Reply):
    task: _Task


class _Episode(_Reply):
    uuid: str


class _EpisodeAdded(_Added):
    episode: _Episode


class _Edge(_Reply):
    fact: str = ""
    episode_uuids: list[str] = Field(default_factory=list)
    score: float | None = None


class _Edges(_Reply):
    items: list[_Edge] = Field(default_factory=list)


class _Deleted(_Reply):
    task: _Task


class ZepEngine(SearchPacks, RemoteEngine):
    name = "zep"
    settings_model = ZepSettings
    scheme = "Api-Key"
    verified_against = f"{SDK} (Zep, AsyncZep) and Zep's v4 API reference"
    capabilities = frozenset({Capability.store, Capability.provenance, Capability.lifecycle})
    notes = (
        "no abstention: graph search ranks what it has and applies no relevance floor",
        "no usage: Zep bills episodes on its dashboard, not per request",
    )

    def __init__(self, settings: ZepSettings) -> None:
        super().__init__(settings)
        self.options = settings
        self._nonce = uuid.uuid4().hex  # this engine's own creations, told apart from others'
        self._users: dict[str, _User] = {}
        self._threads: dict[tuple[str, str], str] = {}
        self._locks: dict[str, asyncio.Lock] = defaultdict(asyncio.Lock)  # one per tenant
        # tenant -> write id -> its task, or None once the task has succeeded
        self._writes: dict[str, dict[str, str | None]] = defaultdict(dict)
        # tenant -> episode uuid -> (assertion id, source) for tracing a fact to its write
        self._episodes: dict[str, dict[str, tuple[str, str | None]]] = defaultdict(dict)

    async def preflight(self) -> None:
        """The project read: proves the host, the key and the project in one request."""
        await self.fetch("GET", f"{API}/project")

    async def _post(self, path: str, body: dict[str, Any], key: str) -> Any:
        """A mutating request under its own `Idempotency-Key` (`key` digested to ASCII)."""
        headers = {HEADER: hw.digest(key, "mk")}
        return await self.request("POST", f"{API}{path}", json=body, headers=headers)

    # ---- users and threads ----------------------------------------------------------------

    async def _user(self, tenant: str) -> _User:
        async with self._locks[tenant]:
            if tenant not in self._users:
                self._users[tenant] = await self._make_user(tenant)
            return self._users[tenant]

    async def _make_user(self, tenant: str) -> _User:
        external = external_id(tenant)
        body = {"user_id": external, "metadata": {"memeval_tenant": tenant}}
        try:
            made = await self._post("/users", body, f"user:{tenant}:{self._nonce}")
        except RemoteError as exc:
            if exc.status != 409:  # another worker made it first: find it
                raise
            made = await self.request("POST", f"{API}/users/lookup", json={"user_id": external})
        return parse(_User, made, self.name)

    async def _thread(self, tenant: str, thread: str) -> str:
        user = await self._user(tenant)
        async with self._locks[tenant]:
            if (tenant, thread) not in self._threads:
                key = f"thread:{tenant}:{thread}:{self._nonce}"
                made = await self._post("/threads", {"user_uuid": user.uuid}, key)
                self._threads[(tenant, thread)] = parse(_Thread, made, self.name).uuid
            return self._threads[(tenant, thread)]

    # ---- writes ---------------------------------------------------------------------------

    async def _episode(self, tenant: str, write: str, text: str, meta: dict[str, Any]) -> str:
        """One episode on the tenant's graph; returns its uuid."""
        user = await self._user(tenant)
        body: dict[str, Any] = {
            "data": text,
            "type": "text",
            "metadata": {k: v for k, v in {**meta, WRITE_TAG: write}.items() if v is not None},
        }
        if meta.get("at"):
            body["reference_time"] = meta["at"]
        if meta.get("source"):
            body["source_description"] = meta["source"]
        added = await self._post(f"/graphs/{user.graph_uuid}/episodes", body, write)
        done = parse(_EpisodeAdded, added, self.name)
        self._writes[tenant][write] = done.task.uuid
        return done.episode.uuid

    async def _messages(
        self, tenant: str, thread: str, key: str, items: list[tuple[str, Turn]]
    ) -> None:
        """One add_messages request: `items` are (write id, turn) pairs, at most 30."""
        thread_uuid = await self._thread(tenant, thread)
        messages = []
        for write, turn in items:
            message: dict[str, Any] = {
                "role": turn.role,
                "content": turn.text,
                "reference_time": turn.at.isoformat(),
                "metadata": {WRITE_TAG: write, **({ID_TAG: turn.id} if turn.id else {})},
            }
            if turn.speaker:
                message["name"] = turn.speaker
            messages.append(message)
        added = await self._post(f"/threads/{thread_uuid}/messages", {"messages": messages}, key)
        task = parse(_Added, added, self.name).task.uuid
        for write, _ in items:
            self._writes[tenant][write] = task

    async def _task(self, task_uuid: str) -> bool | None:
        task = parse(_Task, await self.request("GET", f"{API}/tasks/{task_uuid}"), self.name)
        return True if task.status in DONE else False if task.status == "failed" else None

    async def _wait(self, task_uuid: str, what: str) -> None:
        wait, poll = self.options.settle_wait, self.options.poll
        await hw.until_done(lambda: self._task(task_uuid), f"zep: {what}", wait, poll)

    # ---- reads ----------------------------------------------------------------------------

    async def _search(self, tenant: str, text: str, k: int) -> list[_Edge]:
        if tenant not in self._users:  # nothing written yet: no user, no graph to search
            return []
        graph = self._users[tenant].graph_uuid
        found = await self.request(
            "POST",
            f"{API}/graphs/{graph}/search/edges",
            params={"page_size": k},
            json={"query": text},
        )
        return hw.distinct(parse(_Edges, found, self.name).items, lambda e: e.fact)

    # ---- fixture face ---------------------------------------------------------------------

    async def store(self, tenant: str, assertion: Assertion) -> None:
        write = hw.write_id()
        meta = {ID_TAG: assertion.id, "source": assertion.source}
        episode = await self._episode(tenant, write, assertion.text, meta)
        self._episodes[tenant][episode] = (assertion.id, assertion.source)
        task = self._writes[tenant][write]
        if task is not None:
            await self._wait(task, f"episode for {assertion.id}")

    async def query(self, tenant: str, text: str, k: int = 5) -> QueryResult:
        hits = []
        for edge in await self._search(tenant, text, k):
            known = self._episodes[tenant]
            traced = [known[e] for e in edge.episode_uuids if e in known]
            sources = [s for _, s in traced if s]
            hits.append(
                Hit(
                    text=edge.fact,
                    assertion_id=traced[0][0] if traced else None,
                    source=sources[0] if sources else None,
                    sources=sources,
                    score=edge.score,
                )
            )
        return QueryResult(hits=hits)

    async def reset(self, tenant: str) -> None:
        """Delete the tenant's user (its threads and graph go with it) and wait for it, so a
        later write for the same tenant never meets the user being deleted."""
        async with self._locks[tenant]:
            user = self._users.pop(tenant, None)
            for key in [k for k in self._threads if k[0] == tenant]:
                del self._threads[key]
        self._writes.pop(tenant, None)
        self._episodes.pop(tenant, None)
        try:
            if user is None:  # made by another worker, or never: ask Zep
                found = await self.request(
                    "POST", f"{API}/users/lookup", json={"user_id": external_id(tenant)}
                )
                user = parse(_User, found, self.name)
            headers = {HEADER: hw.digest(f"forget:{user.uuid}", "mk")}
            gone = await self.request("DELETE", f"{API}/users/{user.uuid}", headers=headers)
        except RemoteError as exc:
            if exc.status == 404:  # no such user, or a retried deletion already applied
                return
            raise
        await self._wait(parse(_Deleted, gone, self.name).task.uuid, f"deletion of {tenant}")

    async def recall(self, tenant: str, text: str) -> list[str]:
        return [e.fact for e in await self._search(tenant, text, PACK_K)]

    # ---- lifecycle face -------------------------------------------------------------------

    async def ingest(self, tenant: str, item: MemoryItem) -> str:
        write = hw.write_id()
        text = f"{item.title}: {item.text}" if item.title else item.text
        at = item.at.isoformat() if item.at else None
        await self._episode(tenant, write, text, {ID_TAG: item.id, "kind": item.kind, "at": at})
        return write

    async def post_turn(self, tenant: str, agent: str, thread: str, turn: Turn) -> str:
        write = hw.write_id()
        await self._messages(tenant, thread, write, [(write, turn)])
        return write

    async def write_history(
        self, tenant: str, agent: str, thread: str, turns: list[Turn]
    ) -> list[str]:
        """Up to 30 messages a request; each request keyed by its first message's write id and
        its length, each message by its own write id."""
        writes = hw.item_ids(len(turns))
        items = list(zip(writes, turns, strict=True))
        for start in range(0, len(items), MAX_MESSAGES):
            chunk = items[start : start + MAX_MESSAGES]
            await self._messages(tenant, thread, f"{chunk[0][0]}+{len(chunk)}", chunk)
        return writes

    async def list(self, tenant: str) -> list[str]:
        """Writes whose task has succeeded; a write whose task failed is never listed, so the
        settle step reports the gap. One poll per task, however many writes share it."""
        writes = self._writes[tenant]
        states: dict[str, bool | None] = {}
        for write, task in list(writes.items()):
            if task is None:
                continue
            if task not in states:
                states[task] = await self._task(task)
            if states[task]:
                writes[write] = None
            elif states[task] is False:
                del writes[write]
        return [write for write, task in writes.items() if task is None]

    async def forget(self, tenant: str) -> None:
        await self.reset(tenant)


def external_id(tenant: str) -> str:
    """The Zep `user_id` of a tenant: unique in the project, at most 500 characters."""
    return f"memeval-{tenant_id(tenant)}"

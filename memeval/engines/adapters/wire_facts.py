"""Every wire fact the seed engines' fakes serve, with the vendor source that shows it.

The fakes in `tests/adapters/` stand in for services no test may call, so an adapter is only
as right as the fakes it passes. Each fact here names its source (an SDK file, a vendor tool,
a published reference, a measured double), or None where no source shows it and the fake
guesses; where sources disagree each reading is a named variant the fake serves and the
adapter's tests run against. `memeval engines` shows how many of an engine's facts are
sourced, and `tests/adapters/SOURCES.md` is this table written out
(`python -m memeval.engines.adapters.wire_facts > tests/adapters/SOURCES.md`; a test keeps
the two equal).
"""

from __future__ import annotations

from pydantic import BaseModel

SDK_CORTEX = "cortexdbai 0.12.0 `cortexdb/v1/client.py`"
SDK_CORTEX_ERRORS = "cortexdbai 0.12.0 `cortexdb/v1/exceptions.py`"
CONNECTORS = "cortexdb-connectors 0.2.22 `cortexdb_connectors/cli.py`"
MCP = "cortexdb-mcp 0.8.0 `cortexdb_mcp/server.py`, `insights.py`"
CLI = "cortexdb-cli 0.6.0 `cortexdb_cli/errors.py`"
API_REFERENCE = "CortexDB's published API reference (as quoted in memeval issue #23)"
DOUBLES = "TinyMemory's measured loopback doubles (`cortex/testing/log.rs`, `routes.rs`)"
SDK_TINY = "tinyhumansai 0.5.6 `tinyhumansai/client.py`"
HOSTED = "TinyMemory's hosted doubles and spec (`docs/specs/tinyhumans-hosted-cortex.md`)"
SDK_MEM0 = "mem0ai 2.2.1 `mem0/client/main.py`"
OPENAPI_MEM0 = "mem0's OpenAPI document (`docs/openapi.json` in mem0ai/mem0)"
PLUGIN_MEM0 = "mem0's plugin docs"
VS_PLUGIN = "verifiedstate-plugin README, hooks and skills"
VS_DOCS = "verifiedstate.ai/docs and /how-it-works"
MCP_SPEC = "the `mcp` client (`mcp/client/client.py`) and the MCP specification"


class WireFact(BaseModel):
    fact: str
    source: str | None  # None: no source shows it; the fake guesses
    variant: str | None = None  # the fake's parameter set that serves this reading


def fact(text: str, source: str | None, variant: str | None = None) -> WireFact:
    return WireFact(fact=text, source=source, variant=variant)


FACTS: dict[str, tuple[WireFact, ...]] = {
    "cortex": (
        fact("`Authorization: Bearer <key>` on every call", SDK_CORTEX),
        fact("`X-Cortex-Actor` on every call; the SDK's default is `user:default`", SDK_CORTEX),
        fact(
            "a static operator key answers `whoami` without an actor; a minted token is "
            "refused 401 without one, or with one other than its `sub`",
            CONNECTORS,
            "minted-token",
        ),
        fact("a server without `v1/auth/whoami` (404) reads no actor", None, "no-whoami"),
        fact("request bodies are closed: an unknown field is 422 `INVALID_BODY`", DOUBLES),
        fact("a write envelope: scope, modality, content, context, idempotency_key", SDK_CORTEX),
        fact(
            "the body `idempotency_key` replays the same body; another body under it is 409 "
            "`IDEMPOTENCY_CONFLICT`",
            f"{DOUBLES}; {API_REFERENCE}",
        ),
        fact("a write is readable only after indexing, unless sent with `?wait=indexed`", DOUBLES),
        fact(
            "`?wait=indexed` may answer 408 `WAIT_TIMEOUT`: the write is durable",
            API_REFERENCE,
            "wait-timeout-408",
        ),
        fact("the listing is newest first and shows every event twice", DOUBLES),
        fact(
            "a listed event is `id` with `context.labels` / `context.observed_at`",
            f"{DOUBLES}; {MCP}",
        ),
        fact(
            "a listed event is `event_id` with top-level `labels` / `observed_at`",
            f"{API_REFERENCE}; {MCP}",
            "api-reference-events",
        ),
        fact('a recall sends `diagnostics: "none"`', f"{SDK_CORTEX}; {CLI}"),
        fact(
            "any other diagnostics needs `diagnostics.read`: 403 naming the capability",
            f"{SDK_CORTEX}; {CLI}",
            "diagnostics-enforced",
        ),
        fact(
            "a recall without `diagnostics` is refused like one asking for more",
            None,
            "diagnostics-enforced",
        ),
        fact("a recall answers `{pack_id, layers, context_block}`", f"{SDK_CORTEX}; {DOUBLES}"),
        fact("forget takes `memory_ids` (at most 100) or `confirm_all`, never both", SDK_CORTEX),
        fact(
            "scopes are `type:id` of registered types (`UNREGISTERED_SCOPE_TYPE`)",
            SDK_CORTEX_ERRORS,
        ),
        fact("errors are `{error_code, message, request_id, retriable}`", SDK_CORTEX_ERRORS),
        fact(
            "503 `SYNTHESIZER_UNCONFIGURED`, `STORAGE_UNWIRED`, `ANSWER_UNAVAILABLE` are never "
            "retriable",
            SDK_CORTEX_ERRORS,
        ),
        fact("`v1/admin/usage` is `{total, enrichment_backlog}`", DOUBLES),
        fact("per-caller usage is not exposed on v1 (the SDK has no usage call)", MCP, "usage-403"),
        fact("a server without the usage route answers 404", None, "usage-404"),
        fact("402 can mean a feature not on the key's tier", CLI, "tier-402-on-build"),
        fact("`v1/beliefs/build` answers `{built, items, facts_scanned, reasons}`", SDK_CORTEX),
        fact("each stored event bills one model call", None),
    ),
    "tinyhumans": (
        fact(
            "every answer is `{success, data}`; a failure `{success: false, error, errorCode}`",
            SDK_TINY,
        ),
        fact("the bearer is a JWT or a `tiny_live_` key", f"{SDK_TINY}; {HOSTED}"),
        fact(
            "the event routes are `memory/experience`, `events`, `recall`, `forget`, `scopes`",
            HOSTED,
        ),
        fact(
            "an `Idempotency-Key` claim is taken before the write; a replay is 409 `CONFLICT` "
            "(relayed as 400 `CONFLICT`)",
            HOSTED,
        ),
        fact("an account out of credit answers 402 `USER_INSUFFICIENT_CREDITS`", HOSTED),
        fact("scope segments are `type:id` of `[A-Za-z0-9_-]`, at most 31", HOSTED),
        fact(
            "`memory/recall` with `{namespace, maxChunks}` is the SDK's document recall", SDK_TINY
        ),
        fact("`memory/recall` with a CortexDB recall body answers a pack", HOSTED),
        fact(
            "`memory/recall` takes only the SDK's body; another is 400 naming `namespace`",
            SDK_TINY,
            "recall_shape=sdk",
        ),
        fact("the document API: `memory/insert`, `memory/query`, `memory/admin/delete`", SDK_TINY),
    ),
    "mem0": (
        fact("`Authorization: Token <key>`; `GET /v1/ping/` proves it", SDK_MEM0),
        fact(
            "`POST /v3/memories/add/` takes the entity ids at the top level",
            f"{SDK_MEM0}; {OPENAPI_MEM0}",
        ),
        fact(
            "an add is queued: `{event_id}` then `GET /v1/event/{id}/` until SUCCEEDED",
            OPENAPI_MEM0,
        ),
        fact("`infer: false` is answered at once with `results`", OPENAPI_MEM0),
        fact("`infer: false` is queued like any other add", PLUGIN_MEM0, "sync_verbatim=False"),
        fact(
            "search wants the ids inside `filters`; top-level ids are 400",
            f"{SDK_MEM0}; {OPENAPI_MEM0}",
        ),
        fact("`DELETE /v1/memories/?user_id=` is queued", OPENAPI_MEM0),
        fact("no idempotency key for adds", f"{SDK_MEM0}; {OPENAPI_MEM0}"),
        fact("a page past the last answers 404 `Invalid page.`", None),
        fact("relevance is word overlap (no model runs)", None),
    ),
    "verifiedstate": (
        fact("streamable HTTP MCP at `/mcp`, `Authorization: Bearer vs_live_...`", VS_PLUGIN),
        fact("tools `memory_ingest`, `memory_query`, `memory_verify`, `memory_health`", VS_PLUGIN),
        fact("the namespace rides as `X-Namespace-ID`", VS_PLUGIN),
        fact(
            "the client opens with `server/discover`; an older server answers it HTTP 400",
            MCP_SPEC,
            "legacy=True",
        ),
        fact("query results name an assertion `assertion_id` or `id`", VS_DOCS, "id_field=id"),
        fact("assertions are append-only claims with confidence and a lifecycle", VS_DOCS),
        fact("400, 401 and 404 are documented errors", VS_DOCS),
        fact("`memory_ingest` also extracts one assertion per ingest", None),
        fact("`memory_query` takes `query_text`, `limit` and `as_of`", None),
    ),
}


def sourced(engine: str) -> tuple[int, int] | None:
    """How many of the engine's wire facts name a source, of how many; None for an engine
    without a fake here."""
    facts = FACTS.get(engine)
    return None if facts is None else (sum(f.source is not None for f in facts), len(facts))


def render() -> str:
    """The table as `tests/adapters/SOURCES.md`."""
    lines = [
        "# Wire facts the fakes serve, and their sources",
        "",
        "Written out from `memeval/engines/adapters/wire_facts.py`. A fact without a source is a",
        "guess of the fake's; a fact with a variant is served only when the fake is built with",
        "it, and the adapter's tests run against every variant.",
    ]
    for engine, facts in FACTS.items():
        done, total = sourced(engine) or (0, 0)
        lines += ["", f"## {engine} ({done} of {total} sourced)", ""]
        lines += ["| fact | source | variant |", "| --- | --- | --- |"]
        for f in facts:
            source = f.source or "**guess**: no source shows it"
            lines.append(f"| {f.fact} | {source} | {f'`{f.variant}`' if f.variant else ''} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(render(), end="")

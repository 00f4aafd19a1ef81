"""CortexDB scope paths: the grammar both CortexDB wires enforce, and tenants mapped into it.

A scope is `/`-separated `type:id` segments. From CortexDB v0.10 a deployment admits only the
segment types of its policy (`allowed_scope_types`; every shipped preset allows the ones in
`TYPES`) and answers any other with `422 UNREGISTERED_SCOPE_TYPE`. The TinyHumans memory API
is stricter still: ids of `[A-Za-z0-9_-]` only, at most 31 segments (it re-roots every scope
under the caller's tenant), anything else a 400. So memeval checks every scope against the
stricter of the two before it is sent: a refused scope would fail every case the same way.

memeval tenants (`{run}-{case}-{trial}.{name}`) hold dots and whatever a run label holds, so a
tenant becomes one `ws:` segment through an escape that keeps `[A-Za-z0-9-]` and writes every
other byte as `_xx`. `_` only ever opens an escape, so two tenants never share a scope.
"""

from __future__ import annotations

import re

TYPES = frozenset(
    {"org", "dept", "team", "app", "user", "agent", "service", "ws", "project", "global"}
    | {"system", "source"}
)
MAX_SEGMENTS = 31
TENANT_TYPE = "ws"
_ID = re.compile(r"^[A-Za-z0-9_-]+$")
_KEPT = re.compile(r"[A-Za-z0-9-]")


def check(scope: str) -> str:
    """`scope` if both wires would take it, else a ValueError that says which segment fails."""
    segments = scope.split("/")
    if len(segments) > MAX_SEGMENTS:
        raise ValueError(f"`{scope}` has {len(segments)} segments; at most {MAX_SEGMENTS}")
    for segment in segments:
        kind, colon, ident = segment.partition(":")
        if not colon or not _ID.match(kind) or not _ID.match(ident):
            raise ValueError(f"segment `{segment}` of `{scope}` is not `type:id` ([A-Za-z0-9_-])")
        if kind not in TYPES:
            raise ValueError(
                f"segment type `{kind}` is not one CortexDB admits ({', '.join(sorted(TYPES))})"
            )
    return scope


def tenant_id(tenant: str) -> str:
    """`tenant` as one scope id, reversibly: kept characters as they are, the rest escaped."""
    return "".join(
        char if _KEPT.match(char) else "".join(f"_{byte:02x}" for byte in char.encode())
        for char in tenant
    )


def tenant_scope(prefix: str, tenant: str) -> str:
    return check(f"{prefix}/{TENANT_TYPE}:{tenant_id(tenant)}")

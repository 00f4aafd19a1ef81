"""Scoring a fixture query's result against its typed checks."""

from __future__ import annotations

from memeval.engines.types import Capability, ConflictReport, QueryResult
from memeval.results import CheckResult, CheckStatus
from memeval.scoring.pack import contains
from memeval.suites.fixture import Check, CheckKind

NEEDS: dict[CheckKind, Capability] = {
    CheckKind.contains: Capability.store,
    CheckKind.not_contains: Capability.store,
    CheckKind.not_first: Capability.store,
    CheckKind.abstain: Capability.abstain,
    CheckKind.conflict: Capability.conflicts,
    CheckKind.source: Capability.provenance,
    CheckKind.span: Capability.spans,
}


def _head(result: QueryResult, within: int) -> list[str]:
    """The texts that count as what the engine said: its answer and its leading hits."""
    texts = [h.text for h in result.hits[:within]]
    if result.answer:
        texts.append(result.answer)
    return texts


def _passes(check: Check, result: QueryResult, conflicts: list[ConflictReport]) -> bool:
    abstained = result.abstained or not result.hits
    match check.kind:
        case CheckKind.contains:
            return not abstained and any(
                contains(t, check.text) for t in _head(result, check.within)
            )
        case CheckKind.not_contains:
            every = [h.text for h in result.hits] + ([result.answer] if result.answer else [])
            return not any(contains(t, check.text) for t in every)
        case CheckKind.not_first:
            return not any(contains(t, check.text) for t in _head(result, 1))
        case CheckKind.abstain:
            return abstained
        case CheckKind.conflict:
            wanted = set(check.ids)
            return any(wanted <= set(c.ids) for c in [*result.conflicts, *conflicts])
        case CheckKind.source:
            return any(
                contains(s, check.text)
                for h in result.hits[: check.within]
                for s in [h.source or "", *h.sources]
            )
        case CheckKind.span:
            return any(
                h.span is not None and contains(h.span.text, check.text)
                for h in result.hits[: check.within]
            )
    raise AssertionError(f"unhandled check kind {check.kind}")


def score_check(
    query: int,
    check: Check,
    result: QueryResult,
    conflicts: list[ConflictReport],
    capabilities: frozenset[Capability],
) -> CheckResult:
    """A check needing a capability the engine lacks is `unsupported`, which counts as a fail."""
    value = ", ".join(check.ids) if check.kind is CheckKind.conflict else str(check.value)
    needed = NEEDS[check.kind]
    if needed not in capabilities:
        return CheckResult(
            query=query,
            kind=check.kind.value,
            value=value,
            status=CheckStatus.unsupported,
            detail=f"engine lacks `{needed}`",
        )
    ok = _passes(check, result, conflicts)
    return CheckResult(
        query=query,
        kind=check.kind.value,
        value=value,
        status=CheckStatus.passed if ok else CheckStatus.failed,
        detail="" if ok else _why(check, result),
    )


def _why(check: Check, result: QueryResult) -> str:
    if result.abstained or not result.hits:
        return "engine abstained"
    first = result.hits[0]
    return f"first hit: {first.text[:120]!r}" + (
        f"; answer: {result.answer!r}" if result.answer else ""
    )

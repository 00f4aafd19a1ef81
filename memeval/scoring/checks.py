"""Scoring a fixture query's result against its typed checks."""

from __future__ import annotations

from memeval.engines.types import Capability, ConflictReport, QueryResult
from memeval.results import CheckResult, CheckStatus
from memeval.scoring.pack import contains
from memeval.suites.common import Match
from memeval.suites.fixture import Check, CheckKind, Scope

NEEDS: dict[CheckKind, Capability] = {
    CheckKind.contains: Capability.store,
    CheckKind.not_contains: Capability.store,
    CheckKind.not_first: Capability.store,
    CheckKind.abstain: Capability.abstain,
    CheckKind.conflict: Capability.conflicts,
    CheckKind.source: Capability.provenance,
    CheckKind.sources: Capability.provenance,
    CheckKind.not_source: Capability.provenance,
    CheckKind.span: Capability.spans,
    CheckKind.before: Capability.store,
}
"""`any_of` needs what its alternatives need: it is unsupported only if every one is;
`all_of` is unsupported if any of its checks is."""


def _abstained(result: QueryResult) -> bool:
    return result.abstained or not result.hits


def _texts(check: Check, result: QueryResult) -> list[str]:
    """The texts a contains/not_contains check reads, by its scope (see `Scope`)."""
    answer = [result.answer] if result.answer else []
    default = Scope.all if check.kind is CheckKind.not_contains else Scope.hits
    match check.scope or default:
        case Scope.all:
            return [h.text for h in result.hits] + answer
        case Scope.hits:
            return [h.text for h in result.hits[: check.within]] + answer
        case Scope.answer:
            first = [] if _abstained(result) else [h.text for h in result.hits[:1]]
            return first + answer
    raise AssertionError(f"unhandled scope {check.scope}")


def _cited(result: QueryResult, within: int) -> list[str]:
    return [s for h in result.hits[:within] for s in [h.source or "", *h.sources] if s]


def _passes(check: Check, result: QueryResult, conflicts: list[ConflictReport]) -> bool:
    abstained = _abstained(result)
    m = check.match
    match check.kind:
        case CheckKind.contains:
            return not abstained and any(contains(t, check.text, m) for t in _texts(check, result))
        case CheckKind.not_contains:
            return not any(contains(t, check.text, m) for t in _texts(check, result))
        case CheckKind.not_first:
            first = [h.text for h in result.hits[:1]] + ([result.answer] if result.answer else [])
            return not any(contains(t, check.text, m) for t in first)
        case CheckKind.abstain:
            return abstained
        case CheckKind.conflict:
            wanted = set(check.ids)
            return any(wanted <= set(c.ids) for c in [*result.conflicts, *conflicts])
        case CheckKind.source:
            return any(contains(s, check.text, m) for s in _cited(result, check.within))
        case CheckKind.sources:
            cited = _cited(result, check.within)
            every_wanted = all(any(contains(s, w, m) for s in cited) for w in check.ids)
            only_wanted = all(any(contains(s, w, m) for w in check.ids) for s in cited)
            return not abstained and every_wanted and only_wanted
        case CheckKind.not_source:
            return not any(contains(s, check.text, m) for s in _cited(result, check.within))
        case CheckKind.span:
            return any(
                h.span is not None and contains(h.span.text, check.text, m)
                for h in result.hits[: check.within]
            )
        case CheckKind.before:
            earlier, later = check.ids  # the check's model holds exactly two
            return _in_order(result, earlier, later, m)
        case CheckKind.any_of | CheckKind.all_of:
            raise AssertionError(f"{check.kind} is scored by its checks")
    raise AssertionError(f"unhandled check kind {check.kind}")


def _in_order(result: QueryResult, first: str, then: str, m: Match) -> bool:
    """`first` is in some hit, and `then` in none before it (a tie in one hit is not an
    order)."""
    texts = [h.text for h in result.hits]
    at = next((i for i, t in enumerate(texts) if contains(t, first, m)), None)
    later = next((i for i, t in enumerate(texts) if contains(t, then, m)), None)
    return at is not None and (later is None or at < later)


def _status(
    check: Check,
    result: QueryResult,
    conflicts: list[ConflictReport],
    capabilities: frozenset[Capability],
) -> tuple[CheckStatus, str]:
    if check.kind is CheckKind.any_of:
        inner = [_status(c, result, conflicts, capabilities) for c in check.any_of]
        if any(status is CheckStatus.passed for status, _ in inner):
            return CheckStatus.passed, ""
        if all(status is CheckStatus.unsupported for status, _ in inner):
            return CheckStatus.unsupported, "; ".join(detail for _, detail in inner)
        return CheckStatus.failed, "no alternative passed; " + _why(result)
    if check.kind is CheckKind.all_of:
        inner = [_status(c, result, conflicts, capabilities) for c in check.all_of]
        if all(status is CheckStatus.passed for status, _ in inner):
            return CheckStatus.passed, ""
        unsupported = [d for status, d in inner if status is CheckStatus.unsupported]
        if unsupported:
            return CheckStatus.unsupported, "; ".join(unsupported)
        return CheckStatus.failed, "not every check passed; " + _why(result)
    needed = NEEDS[check.kind]
    if needed not in capabilities:
        return CheckStatus.unsupported, f"engine lacks `{needed}`"
    if _passes(check, result, conflicts):
        return CheckStatus.passed, ""
    return CheckStatus.failed, _why(result)


def score_check(
    query: int,
    check: Check,
    result: QueryResult,
    conflicts: list[ConflictReport],
    capabilities: frozenset[Capability],
) -> CheckResult:
    """A check needing a capability the engine lacks is `unsupported`, which counts as a fail."""
    status, detail = _status(check, result, conflicts, capabilities)
    return CheckResult(
        query=query, kind=check.kind.value, value=check.label, status=status, detail=detail
    )


def _why(result: QueryResult) -> str:
    if result.abstained or not result.hits:
        return "engine abstained" + (f"; answer: {result.answer!r}" if result.answer else "")
    first = result.hits[0]
    return f"first hit: {first.text[:120]!r}" + (
        f"; answer: {result.answer!r}" if result.answer else ""
    )


def acceptable(reported: list[ConflictReport], sets: list[list[str]]) -> int:
    """How many reported conflicts name two or more ids of one acceptable set."""
    return sum(any(len(set(c.ids) & set(ids)) >= 2 for ids in sets) for c in reported)

"""What an agent host really puts in its prompt: the pack it waited for, cut to its limits.

A host gives memory a fixed time before each turn and then answers without it; it also has a
token budget for memory and often a cap on how many sections it pastes. `--deadline`,
`--pack-tokens` and `--pack-sections` score each probe a second time on that view, so a report
shows the accuracy a host would see beside the unbounded one.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from memeval.engines.pack import tokens


class HostLimits(BaseModel):
    """A host's limits on the pre-turn pack; any one of them makes the run score host views."""

    deadline_ms: float | None = Field(
        default=None, gt=0, description="A pack that takes longer arrives too late: empty."
    )
    pack_tokens: int | None = Field(
        default=None, ge=1, description="The host keeps the pack's lines that fit this budget."
    )
    pack_sections: int | None = Field(
        default=None, ge=1, description="The host keeps the pack's first sections only."
    )


def host_view(markdown: str, elapsed_ms: float, limits: HostLimits) -> tuple[str, bool]:
    """The pack as the host pastes it, and whether it came too late to paste at all."""
    if limits.deadline_ms is not None and elapsed_ms > limits.deadline_ms:
        return "", True
    lines = markdown.splitlines()
    if limits.pack_sections is not None:
        kept, seen = [], 0
        for line in lines:
            if line.startswith("## "):
                seen += 1
                if seen > limits.pack_sections:
                    break
            kept.append(line)
        lines = kept
    if limits.pack_tokens is not None:
        kept, used = [], 0
        for line in lines:
            used += tokens(line + "\n")
            if used > limits.pack_tokens:
                break
            kept.append(line)
        lines = kept
    return "\n".join(lines), False

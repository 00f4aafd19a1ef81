"""Pack rendering shared by engines: sections in priority order, held to a token budget."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field

from memeval.engines.types import Pack

CHARS_PER_TOKEN = 4
PACK_K = 12
"""How many items an adapter asks its engine's own retrieval for, one pack: the same for every
engine, so a comparison differs in what each engine ranks first, not in how much it may return
(the pack is then cut to the token budget)."""
LEARNINGS = "Learnings"
DOCUMENTS = "Documents"
AGENT_HISTORY = "This agent's history"
TEAM = "Team conversations"
EARLIER = "Earlier in this thread"
SECTION_ORDER = (LEARNINGS, DOCUMENTS, AGENT_HISTORY, TEAM, EARLIER)


class Section(BaseModel):
    title: str
    bullets: list[str] = Field(default_factory=list)


def tokens(text: str) -> int:
    return -(-len(text) // CHARS_PER_TOKEN)


def turn_bullet(speaker: str, at: datetime | None, text: str, tools: tuple[str, ...] = ()) -> str:
    """One logged turn as a pack line: when, who, what (and which tools it called)."""
    when = f"{at:%Y-%m-%d %H:%M} " if at else ""
    calls = f" (tools: {', '.join(tools)})" if tools else ""
    return f"{when}{speaker}: {text}{calls}"


def render(title: str, sections: list[Section], budget_tokens: int) -> Pack:
    """Sections keep their order; when over budget, bullets are dropped from the end."""
    order = {name: i for i, name in enumerate(SECTION_ORDER)}
    ordered = sorted(
        (s for s in sections if s.bullets), key=lambda s: order.get(s.title, len(order))
    )
    head = f"# {title}\n"
    parts: list[tuple[str, str]] = []  # (section title, bullet line)
    for section in ordered:
        for bullet in section.bullets:
            line = " ".join(bullet.split())
            if line:
                parts.append((section.title, f"- {line}"))
    budget = budget_tokens * CHARS_PER_TOKEN
    while parts and len(_join(head, parts)) > budget:
        parts.pop()
    markdown = _join(head, parts)
    return Pack(markdown=markdown, tokens=tokens(markdown))


def _join(head: str, parts: list[tuple[str, str]]) -> str:
    out = [head]
    current = None
    for section, line in parts:
        if section != current:
            out.append(f"\n## {section}\n")
            current = section
        out.append(line + "\n")
    return "".join(out)

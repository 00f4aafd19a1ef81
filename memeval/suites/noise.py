"""Generated distractors: the haystack a scenario's needles are hidden in (`noise:`).

A scenario's tenant holds a few dozen writes, so any engine's top five fit a pack and pack hit
cannot tell engines apart. Noise pads each tenant with workplace chatter and notes of the same
register as real cases (people, projects, tickets, numbers, days, places), so lexical overlap
alone no longer finds the needle. It is seeded per tenant, so a run is reproducible, and no
distractor may hold any string a probe of the scenario expects, counts as stale or forbids: a
distractor never answers a probe, right or wrong.
"""

from __future__ import annotations

import random
from collections import Counter
from datetime import datetime, timedelta

from pydantic import BaseModel

from memeval.scoring.pack import contains
from memeval.suites.common import Match
from memeval.suites.scenario import Noise, Scenario

THREAD_TURNS = 20
"""Turns per generated history thread: long enough to read like a conversation."""
SAMPLE = 200
"""Draws `blocking` tries before it calls a scenario's noise impossible to generate."""

NAMES = """Aiko Amara Ben Bruno Carla Chidi Dmitri Elena Farah Gus Hana Igor Ines Jonas Kemal Lena
Luis Maya Nadia Omar Priya Quinn Rafael Sana Tariq Uma Viktor Wen Yara Zoe""".split()
TEAMS = "platform growth billing search mobile data infra support design legal".split()
PROJECTS = """Aurora Basalt Cinder Delta Ember Fjord Garnet Harbor Indigo Juniper Kestrel Lumen
Meridian Nimbus Onyx Pylon Quartz Raven Sierra Tundra""".split()
COMPONENTS = """checkout-web auth-service ledger-worker search-indexer push-gateway report-builder
image-resizer billing-api export-queue session-cache""".split()
CITIES = "Porto Oslo Austin Nairobi Krakow Osaka Denver Dublin Montreal Seville".split()
DAYS = "Monday Tuesday Wednesday Thursday Friday".split()
MONTHS = "January February March April May June July August September October".split()
TOOLS = "Notion Jira Figma Grafana Looker Miro Linear Sentry Airtable Retool".split()
VENDORS = "Acme Cloudlane Datapoint Fernway Gridstone Helix Ironleaf Juno Kiteworks Lark".split()

TEMPLATES = (
    "{name} moved the {project} sync to {day} at {hour}:30.",
    "Reminder: the {team} offsite is in {city} on {month} {date}.",
    "Ticket {prefix}-{num} is waiting on {name} to review the {component} change.",
    "The {component} dashboard showed a p95 of {ms} ms after the {version} deploy.",
    "{name} prefers the {tool} template for {team} retrospectives.",
    "The {project} budget for Q{quarter} is {amount} dollars, signed off by {name}.",
    "Can someone look at why the {component} nightly job failed on host {host}?",
    "I'm out {day} afternoon; {name} covers the {team} queue until I'm back.",
    "{vendor} sent their renewal quote: {amount} dollars a year, due {month} {date}.",
    "We agreed the {project} demo goes to the {team} leads before the {month} review.",
    "{name} asked whether {component} can drop the legacy v{major} endpoints by {month}.",
    "The {city} team hit {num} sign-ups last week, mostly from the {project} campaign.",
    "Pairing with {name} on the {component} flaky test; it only fails under load.",
    "Heads up: {tool} seats for the {team} team renew on {month} {date}.",
    "{name} will write up the {project} post-mortem and share it in {tool} by {day}.",
    "Capacity note: {component} runs {num} pods in {city} and needs two more for peak.",
    "The {team} hiring loop for the {project} role has {small} candidates in final rounds.",
    "{name} booked the large room on {day} for the {project} planning session.",
    "Moved {prefix}-{num} to the {team} backlog; it is not blocking the {version} release.",
    "{vendor} support says the outage on {month} {date} was on their side, not in {component}.",
)


def _slots(rng: random.Random) -> dict[str, str]:
    return {
        "name": rng.choice(NAMES),
        "team": rng.choice(TEAMS),
        "project": rng.choice(PROJECTS),
        "component": rng.choice(COMPONENTS),
        "city": rng.choice(CITIES),
        "day": rng.choice(DAYS),
        "month": rng.choice(MONTHS),
        "tool": rng.choice(TOOLS),
        "vendor": rng.choice(VENDORS),
        "hour": str(rng.randint(8, 17)),
        "date": str(rng.randint(1, 28)),
        "num": str(rng.randint(100, 9999)),
        "small": str(rng.randint(2, 9)),
        "ms": str(rng.randint(40, 2400)),
        "amount": f"{rng.randint(2, 90) * 500:,}",
        "quarter": str(rng.randint(1, 4)),
        "prefix": rng.choice(("OPS", "ENG", "SUP", "FIN", "WEB")),
        "host": f"{rng.choice(('db', 'app', 'batch', 'edge'))}-{rng.randint(1, 40):02d}",
        "version": f"v{rng.randint(1, 9)}.{rng.randint(0, 30)}.{rng.randint(0, 9)}",
        "major": str(rng.randint(1, 4)),
    }


class Distractor(BaseModel):
    id: str
    thread: str
    speaker: str
    text: str
    at: datetime


def _banned(scenario: Scenario) -> list[tuple[str, Match]]:
    return [
        (text, probe.match_for(text))
        for probe in scenario.probes
        for text in [*probe.expect, *probe.stale, *probe.forbidden, *probe.accept]
    ]


def _draw(rng: random.Random) -> str:
    return rng.choice(TEMPLATES).format(**_slots(rng))


def blocking(scenario: Scenario) -> str | None:
    """The probe string found in every one of `SAMPLE` draws, when there is one: a distractor
    may hold no probe's string, so with it the generator would draw for ever (`expect: [e]`
    is in every template). None when some draw is usable, which is almost always the first."""
    banned = _banned(scenario)
    rng = random.Random(f"check:{scenario.name}")
    found: Counter[str] = Counter()
    for _ in range(SAMPLE):
        text = _draw(rng)
        hits = [b for b, m in banned if contains(text, b, m)]
        if not hits:
            return None
        found.update(hits)
    return found.most_common(1)[0][0]


AFTER = timedelta(days=30)
"""How long after the scenario's last write distractors run on when the needle is early or in
the middle: the probes then ask a day after the last of them (`needle_now`)."""


def needle_now(scenario: Scenario, noise: Noise) -> datetime | None:
    """The evaluation time a needle sweep needs, when the scenario names none: after the
    distractors that follow its writes. None when the scenario's own time serves."""
    if scenario.now is not None or noise.needle in (None, "late"):
        return None
    return scenario.last_write + AFTER + timedelta(days=1)


def _windows(scenario: Scenario, noise: Noise, count: int) -> list[tuple[datetime, float, int]]:
    """(begin, seconds over which a generated thread may start, how many) for each stretch of
    history the distractors fill.

    Without a needle position they are spread from 30 days before the start to the last
    write, as they always were; with one, the scenario's writes form a block in the history
    that the distractors precede (`late`), follow (`early`) or surround (`middle`)."""
    zone = scenario.last_write.tzinfo
    begin = datetime.combine(scenario.start, datetime.min.time(), zone) - timedelta(days=30)
    thread = 60.0 * THREAD_TURNS
    if noise.needle is None:
        return [(begin, max(60.0, (scenario.last_write - begin).total_seconds()) - thread, count)]
    first = min(
        [scenario.written_at(w) for w in [*scenario.documents, *scenario.learnings]]
        + [lines[0].at for lines in scenario.thread_lines.values() if lines],
        default=scenario.last_write,
    )
    before = (begin, max(0.0, (first - begin).total_seconds() - thread))
    after_begin = scenario.last_write + timedelta(minutes=1)
    until = scenario.now or (scenario.last_write + AFTER)
    after = (after_begin, max(0.0, (until - after_begin).total_seconds() - thread))
    if noise.needle == "late":
        return [(*before, count)]
    if noise.needle == "early":
        return [(*after, count)]
    half = count // 2
    return [(*before, half), (*after, count - half)]


def distractors(scenario: Scenario, noise: Noise, tenant: str, count: int) -> list[Distractor]:
    """`count` distractors for one tenant, in generated threads of consecutive minutes, placed
    around the scenario's writes as `noise.needle` says (`_windows`)."""
    rng = random.Random(f"{noise.seed}:{scenario.name}:{tenant}")
    banned = _banned(scenario)
    out: list[Distractor] = []
    blocks = 0
    for begin, span, want in _windows(scenario, noise, count):
        made, block, start = 0, blocks, begin
        while made < want:
            index = made % THREAD_TURNS
            if index == 0:
                start = begin + timedelta(seconds=rng.uniform(0, span))
                block, blocks = blocks, blocks + 1
            text = _draw(rng)
            if any(contains(text, b, m) for b, m in banned):
                continue
            out.append(
                Distractor(
                    id=f"noise-{block}.{index}",
                    thread=f"noise-{block}",
                    speaker=rng.choice(NAMES),
                    text=text,
                    at=start + timedelta(minutes=index),
                )
            )
            made += 1
    return out

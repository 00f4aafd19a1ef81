"""Markers by what a test needs, so `python -m pytest -m "not services"` runs on a laptop with
no Redis or PostgreSQL server while the README's command still runs everything.

A test is marked from what it reaches, not from a list kept by hand: the source of its module
and of every conftest that defines a fixture it uses is searched for the service's address or
client, so a new test that talks to Redis is marked `redis` the day it is written.

- `redis`: the machine's Redis on 127.0.0.1:6379 (the embedded farm's private Redis is not one:
  it ships with memeval);
- `postgres`: the machine's PostgreSQL on 127.0.0.1:5432;
- `services`: either of them;
- `farm`: Celery workers or an embedded farm in the test;
- `browser`: headless Chromium;
- `slow`: the tests handed out first for being longest (`tests/conftest.py`'s LONG groups).
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

import pytest

NEEDS = {
    "redis": re.compile(r"6379|REDIS_URL\b|redis_url|connect_redis|machine_redis"),
    "postgres": re.compile(r"5432|postgresql(\+psycopg)?://|psycopg|pg_url|postgres_url"),
    "farm": re.compile(r"EmbeddedFarm|private_farm|memeval_farm\.|\"--farm\"|farm=\"embedded\""),
    "browser": re.compile(r"tests\.report\.chromium|tests\.viewer\.cdp|chromium\(\)"),
}
SERVICES = ("redis", "postgres")


@functools.cache
def _source(path: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except OSError:
        return ""


def needs(item: pytest.Item) -> set[str]:
    """What `item` reaches, read from its module and its fixtures' modules."""
    paths = {str(item.path)}
    info = getattr(item, "_fixtureinfo", None)
    if info is not None:
        for name in info.names_closure:
            for fixture in info.name2fixturedefs.get(name, ()):
                code = getattr(fixture.func, "__code__", None)
                if code is not None and "/tests/" in code.co_filename:
                    paths.add(code.co_filename)
    text = "\n".join(_source(p) for p in sorted(paths))
    return {name for name, pattern in NEEDS.items() if pattern.search(text)}


def mark(item: pytest.Item, slow: bool) -> None:
    found = needs(item)
    if found & set(SERVICES):
        found.add("services")
    if slow:
        found.add("slow")
    for name in sorted(found):
        item.add_marker(getattr(pytest.mark, name))

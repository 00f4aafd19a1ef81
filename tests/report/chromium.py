"""Headless Chromium for the HTML tests: render a page, dump its DOM after the scripts ran.

Chromium is required, never skipped: a missing browser fails with the command that installs it.
"""

from __future__ import annotations

import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

INSTALL = "apt-get update && apt-get install -y chromium"
VIEW = 100  # rows the report's item table draws at a time (report.js)
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--enable-logging=stderr",
    "--v=0",
]


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        pytest.fail(f"headless Chromium is required for this test; install it with: {INSTALL}")
    return found


def browse(
    page: Path, profile: Path, *args: str, fragment: str = ""
) -> subprocess.CompletedProcess:
    url = page.resolve().as_uri() + fragment
    done = subprocess.run(
        [chromium(), *FLAGS, f"--user-data-dir={profile}", *args, url],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Content Security Policy" not in done.stderr, "the page broke its own CSP"
    assert "Uncaught" not in done.stderr, done.stderr[-2000:]
    return done


class Elements(HTMLParser):
    """Every element of a DOM dump, as (tag, attributes), plus the text of each `td`."""

    def __init__(self, dom: str) -> None:
        super().__init__()
        self.found: list[tuple[str, dict[str, str]]] = []
        self.cells: list[str] = []
        self._in_td = False
        self.feed(dom)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.found.append((tag, {k: v or "" for k, v in attrs}))
        self._in_td = tag == "td"
        if self._in_td:
            self.cells.append("")

    def handle_endtag(self, tag: str) -> None:
        if tag == "td":
            self._in_td = False

    def handle_data(self, data: str) -> None:
        if self._in_td:
            self.cells[-1] += data

    def all(self, tag: str, **attrs: str) -> list[dict[str, str]]:
        return [
            a
            for t, a in self.found
            if t == tag
            and all(
                (v in a.get(k.rstrip("_"), "").split()) if k.endswith("_") else a.get(k) == v
                for k, v in attrs.items()
            )
        ]

    def chart(self, name: str) -> int:
        """The index of the chart's <svg> in document order; its shapes follow it."""
        return next(i for i, (t, a) in enumerate(self.found) if a.get("data-chart") == name)

    def shapes(self, name: str, tag: str, cls: str) -> int:
        start = self.chart(name)
        end = next(
            (i for i, (t, _) in enumerate(self.found) if i > start and t == "svg"),
            len(self.found),
        )
        return sum(
            1 for t, a in self.found[start:end] if t == tag and cls in a.get("class", "").split()
        )

"""Headless Chromium driven over the DevTools protocol, for pages that change after they load.

`--dump-dom` (tests/report/chromium.py) shows a page once; the viewer's run page fills in while
cases land, so these tests keep a page open and read it as it changes. The protocol is a
websocket of JSON commands; the few used here need no client library beyond `websockets`.
"""

from __future__ import annotations

import itertools
import json
import re
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from websockets.sync.client import ClientConnection, connect

from tests.report.chromium import FLAGS, chromium

LISTENING = re.compile(r"DevTools listening on (ws://\S+)")


class Page:
    def __init__(self, socket: ClientConnection, session: str) -> None:
        self._socket = socket
        self._session = session
        self._ids = itertools.count(1000)
        self.problems: list[str] = []
        """Uncaught exceptions and console errors (a CSP refusal is one), as they happened."""

    def send(self, method: str, **params: Any) -> dict[str, Any]:
        call = next(self._ids)
        message = {"id": call, "method": method, "params": params, "sessionId": self._session}
        self._socket.send(json.dumps(message))
        while True:
            reply = json.loads(self._socket.recv(timeout=60))
            if reply.get("id") == call:
                assert "error" not in reply, reply["error"]
                return reply.get("result", {})
            self._note(reply)

    def _note(self, event: dict[str, Any]) -> None:
        params = event.get("params", {})
        if event.get("method") == "Runtime.exceptionThrown":
            self.problems.append(json.dumps(params.get("exceptionDetails", {}))[:500])
        elif event.get("method") == "Log.entryAdded" and params["entry"]["level"] == "error":
            text = params["entry"].get("text", "")
            if "Failed to load resource" not in text:  # a 401 or 404 the test asked for
                self.problems.append(text)

    def go(self, url: str) -> None:
        self.send("Page.navigate", url=url)
        self.wait_for("document.readyState === 'complete'")

    def read(self, expression: str) -> Any:
        result = self.send("Runtime.evaluate", expression=expression, returnByValue=True)
        return result["result"].get("value")

    def wait_for(self, expression: str, timeout: float = 30.0) -> Any:
        deadline = time.monotonic() + timeout
        while True:
            try:
                value = self.read(expression)
            except AssertionError:  # the page was between documents
                value = None
            if value:
                return value
            assert time.monotonic() < deadline, f"never true: {expression}"
            time.sleep(0.1)


@contextmanager
def browser(profile: Path) -> Iterator[Page]:
    process = subprocess.Popen(
        [chromium(), *FLAGS, "--remote-debugging-port=0", "--remote-debugging-address=127.0.0.1",
         f"--user-data-dir={profile}", "about:blank"],
        stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    assert process.stderr is not None
    try:
        address = None
        deadline = time.monotonic() + 60
        while address is None and time.monotonic() < deadline:
            line = process.stderr.readline()
            assert line or process.poll() is None, "Chromium exited before it listened"
            found = LISTENING.search(line)
            address = found.group(1) if found else None
        assert address is not None, "Chromium did not open its DevTools socket"
        with connect(address, max_size=None) as socket:
            page = _attach(socket)
            for domain in ("Page", "Runtime", "Log"):
                page.send(f"{domain}.enable")
            yield page
    finally:
        process.kill()
        process.wait(10)


def _attach(socket: ClientConnection) -> Page:
    blank = {"url": "about:blank"}
    socket.send(json.dumps({"id": 1, "method": "Target.createTarget", "params": blank}))
    target = _reply(socket, 1)["targetId"]
    socket.send(
        json.dumps({"id": 2, "method": "Target.attachToTarget",
                    "params": {"targetId": target, "flatten": True}})
    )  # fmt: skip
    return Page(socket, _reply(socket, 2)["sessionId"])


def _reply(socket: ClientConnection, call: int) -> dict[str, Any]:
    while True:
        reply = json.loads(socket.recv(timeout=60))
        if reply.get("id") == call:
            return reply["result"]

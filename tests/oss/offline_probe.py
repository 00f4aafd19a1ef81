"""Run as a script: drive one engine through a few calls with every socket connection and
name lookup recorded by an audit hook, then print them as JSON at the very end of exit
(telemetry clients flush from their own exit handlers, which run before this one)."""

from __future__ import annotations

import asyncio
import atexit
import json
import sys
from typing import Any

seen: list[str] = []


def _hook(event: str, args: tuple[Any, ...]) -> None:
    if event == "socket.connect":
        seen.append(f"connect {args[1]!r}")
    elif event == "socket.getaddrinfo":
        seen.append(f"lookup {args[0]!r}")


sys.addaudithook(_hook)
atexit.register(lambda: print(json.dumps(seen), flush=True))


def main(reference: str) -> None:
    from datetime import UTC, datetime

    from memeval.engines import registry
    from memeval.engines.types import Assertion, Turn

    engine = registry.create(reference)

    async def go() -> None:
        await engine.preflight()
        await engine.store("t1", Assertion(id="a1", text="Ada runs the Oslo lab.", source="memo"))
        turn = Turn(role="user", text="I moved to Bergen.", at=datetime(2024, 1, 1, tzinfo=UTC))
        await engine.post_turn("t1", "agent", "thread", turn)
        await engine.query("t1", "Who runs the Oslo lab?")
        await engine.list("t1")
        await engine.forget("t1")
        await engine.close()

    asyncio.run(go())


if __name__ == "__main__":
    main(sys.argv[1])

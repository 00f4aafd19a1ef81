"""Run as a script: serve MiniLM embeddings in this process with every socket connection and
name lookup recorded by an audit hook, embed the published pair through the service, and
print the cosine and what the hook saw as JSON on the last line."""

from __future__ import annotations

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


def main() -> None:
    import httpx

    from memeval.models.server import running

    pair = ["A man is eating food.", "A man is eating a piece of bread."]
    with running() as url:
        reply = httpx.post(f"{url}/embeddings", json={"model": "any", "input": pair}).json()
        models = [m["id"] for m in httpx.get(f"{url}/models").json()["data"]]
    first, second = (d["embedding"] for d in reply["data"])
    cosine = sum(a * b for a, b in zip(first, second, strict=True))
    print(json.dumps({"cosine": cosine, "models": models, "seen": seen}), flush=True)


if __name__ == "__main__":
    main()

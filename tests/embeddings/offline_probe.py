"""Run as a script with `memeval`'s arguments: run that command in this process with an audit
hook recording every socket connection, datagram, name lookup, bind and child process, and
print what the hook saw as JSON on the last line when the process exits (after an interrupt,
for `memeval models serve`)."""

from __future__ import annotations

import atexit
import json
import sys
from typing import Any

seen: list[str] = []
WATCHED = {
    "socket.connect": "connect",
    "socket.sendto": "sendto",
    "socket.getaddrinfo": "lookup",
    "socket.gethostbyname": "lookup",
    "socket.bind": "bind",
}
SPAWNS = ("subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork")


def _hook(event: str, args: tuple[Any, ...]) -> None:
    if event in WATCHED:
        # connect/sendto/bind carry (socket, address); the lookups carry the host first.
        where = args[1] if event in ("socket.connect", "socket.sendto", "socket.bind") else args[0]
        seen.append(f"{WATCHED[event]} {where!r}")
    elif event.startswith(SPAWNS):
        seen.append(f"spawn {event} {args[:2]!r}")


sys.addaudithook(_hook)
atexit.register(lambda: print(json.dumps(seen), flush=True))


if __name__ == "__main__":
    from memeval.cli import main

    sys.argv = ["memeval", *sys.argv[1:]]
    main()

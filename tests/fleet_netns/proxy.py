"""A userspace TCP proxy that adds latency and jitter, and refuses a share of new connections.

Kernel `netem` is not available where the fleet test runs, so the links between the network
namespaces get their delay here: every chunk read from one side is written to the other side
`latency` (plus or minus `jitter`) later, in order. `drop` is the probability that a new
connection is closed at once, as a lossy network makes a client reconnect. Cutting a link
outright is done below the proxy (`ip link set ... down`), where it is a real cut.

    python -m tests.fleet_netns.proxy --latency-ms 5 --jitter-ms 2 HOST:PORT=HOST:PORT ...
"""

from __future__ import annotations

import argparse
import asyncio
import random


async def pipe(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, latency: float, jitter: float
) -> None:
    """Copy one direction, each chunk held until its due time, never reordered."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue()

    async def send() -> None:
        while True:
            due, chunk = await queue.get()
            await asyncio.sleep(max(0.0, due - loop.time()))
            if not chunk:
                writer.close()
                return
            writer.write(chunk)
            await writer.drain()

    sender = asyncio.create_task(send())
    last = 0.0
    try:
        while True:
            chunk = await reader.read(65536)
            last = max(last, loop.time() + latency + random.uniform(-jitter, jitter))
            await queue.put((last, chunk))
            if not chunk:
                break
        await sender
    except (ConnectionError, OSError):
        sender.cancel()
        writer.close()


async def serve(listen: str, target: str, latency: float, jitter: float, drop: float) -> None:
    host, port = listen.rsplit(":", 1)
    to_host, to_port = target.rsplit(":", 1)

    async def accept(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if random.random() < drop:
            writer.close()
            return
        try:
            up_reader, up_writer = await asyncio.open_connection(to_host, int(to_port))
        except OSError:
            writer.close()
            return
        await asyncio.gather(
            pipe(reader, up_writer, latency, jitter),
            pipe(up_reader, writer, latency, jitter),
            return_exceptions=True,
        )

    server = await asyncio.start_server(accept, host, int(port))
    async with server:
        await server.serve_forever()


async def main(args: argparse.Namespace) -> None:
    latency, jitter = args.latency_ms / 1000, args.jitter_ms / 1000
    await asyncio.gather(
        *(serve(*route.split("="), latency, jitter, args.drop) for route in args.routes)
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency-ms", type=float, default=0.0)
    parser.add_argument("--jitter-ms", type=float, default=0.0)
    parser.add_argument("--drop", type=float, default=0.0)
    parser.add_argument("routes", nargs="+", metavar="LISTEN=TARGET")
    asyncio.run(main(parser.parse_args()))

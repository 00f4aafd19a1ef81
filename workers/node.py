"""The embedded farm's worker node: `python -m workers.node POOL CONCURRENCY HOSTNAME`.

It builds the worker as `celery worker` does, without Celery's command line: that imports every
`celery` subcommand and each installed plugin's (Flower's web app among them), about a third
of a second of CPU in every `memeval run`. `memeval worker` keeps the command line, whose
options it passes through to Celery.
"""

from __future__ import annotations

import sys

from celery import concurrency

from workers.app import app


def main(argv: list[str]) -> int:
    pool, workers, hostname = argv
    worker = app.Worker(
        hostname=hostname,
        pool_cls=concurrency.get_implementation(pool),
        concurrency=int(workers),
        loglevel="WARNING",
        without_gossip=True,
        without_mingle=True,
    )
    worker.start()
    return int(worker.exitcode or 0)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""The embedded farm's worker node: `main([POOL, CONCURRENCY, HOSTNAME])`, in a child forked
from `memeval run` (which has imported most of what a node needs), or as
`python -m memeval_farm.node POOL CONCURRENCY HOSTNAME` where a fork is unsafe
(`memeval_farm.children`).

It builds the worker as `celery worker` does, without Celery's command line: that imports every
`celery` subcommand and each installed plugin's (Flower's web app among them), about a third
of a second of CPU in every `memeval run`. `memeval worker` keeps the command line, whose
options it passes through to Celery.
"""

from __future__ import annotations

import sys

from celery import concurrency

from memeval_farm import preflight  # noqa: F401  registers the preflight control command
from memeval_farm.children import NODE_NAME, name_process
from memeval_farm.config import make_app
from memeval_farm.settings import load_settings


def main(argv: list[str]) -> int:
    """Built from this process's environment when called, not at import: the embedded farm
    forks this node from a `memeval run` whose environment names no broker."""
    pool, workers, hostname = argv
    name_process(NODE_NAME)
    app = make_app(load_settings())
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

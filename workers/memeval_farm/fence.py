"""Each dispatch of a run is an epoch; only the latest epoch's tasks may run or store.

A dispatcher killed mid-run leaves its messages in the broker. `--resume` sends the missing
cases again, so without a fence both copies ran (and, with a model, both were paid for), and
the old chord closed the run while the new copies were still writing into it. The dispatcher
writes a fresh epoch for the run in the farm's Redis before it sends anything; every message
carries the epoch it was sent with, and a task whose epoch is no longer the run's returns
without running, or without storing when the resume came while it ran. A message without an
epoch (sent by an older memeval) runs only while its run has none.
"""

from __future__ import annotations

import secrets

import redis

from memeval_farm.broker import BROKER_FAULTS

KEY_TTL_S = 30 * 24 * 3600
"""As long as a budget: a resume a month later still fences what the first dispatch left."""
SUPERSEDED = "a later dispatch of its run (a resume) superseded this message"


class Fence:
    def __init__(self, prefix: str) -> None:
        self.prefix = prefix

    def key(self, run_id: str) -> str:
        return f"{self.prefix}memeval:epoch:{run_id}"

    def advance(self, client: redis.Redis | None, run_id: str) -> str:
        """A new epoch for `run_id`, written before its messages are sent."""
        epoch = secrets.token_hex(6)
        if client is not None:
            client.set(self.key(run_id), epoch, ex=KEY_TTL_S)
        return epoch

    def current(self, client: redis.Redis | None, run_id: str, epoch: str | None) -> bool:
        """Whether a message sent with `epoch` is still the run's latest. A Redis that does not
        answer fences nothing: the run's status in the store still guards its rows."""
        if client is None:
            return True
        try:
            raw = client.get(self.key(run_id))
        except BROKER_FAULTS:
            return True
        if raw is None:
            return True
        return (raw.decode() if isinstance(raw, bytes) else raw) == epoch

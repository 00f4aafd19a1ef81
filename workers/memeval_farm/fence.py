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
from datetime import UTC, datetime

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
        """A new epoch for `run_id`, written (with when it began) before its messages are sent."""
        epoch = secrets.token_hex(6)
        if client is not None:
            began = datetime.now(UTC).timestamp()
            client.set(self.key(run_id), f"{epoch} {began}", ex=KEY_TTL_S)
        return epoch

    def _read(self, client: redis.Redis | None, run_id: str) -> tuple[str, datetime] | None:
        if client is None:
            return None
        try:
            raw = client.get(self.key(run_id))
        except BROKER_FAULTS:
            return None
        if raw is None:
            return None
        epoch, _, began = (raw.decode() if isinstance(raw, bytes) else raw).partition(" ")
        return epoch, datetime.fromtimestamp(float(began or 0), UTC)

    def current(self, client: redis.Redis | None, run_id: str, epoch: str | None) -> bool:
        """Whether a message sent with `epoch` is still the run's latest. A Redis that does not
        answer fences nothing: the run's status in the store still guards its rows."""
        read = self._read(client, run_id)
        return read is None or read[0] == epoch

    def began(self, client: redis.Redis | None, run_id: str) -> datetime | None:
        """When the run's latest dispatch began, or None where no epoch can be read."""
        read = self._read(client, run_id)
        return None if read is None else read[1]
